/**
 * Distinct sets for unique_count meters created before they existed (migration 340, docs/usage.md "Usage rollups"):
 * such a meter has records but no registration, so its reads take the older, slower path (a distinct count
 * over usage_hourly). Every migration pass (services/migrate.ts) backfills them, safe to interrupt and re-run:
 *
 * 1. register the meter with `ready` = 0: from then on every recompute of its hours — consumer, sweeper,
 *    correction, on any process — writes its distinct sets too, while readers keep the older path;
 * 2. recompute every hour the meter has records in (hours gaining records later are recomputed by whoever
 *    inserts them, and that recompute reads the registration after its rows were written);
 * 3. register it again with `ready` = 1: readers switch to the sets, which now cover every hour.
 */
import { chString, recomputeHours, recordedHours } from './rollups-store.js';
import {
  registerUniqueMeter,
  uniqueKeysOf,
  meterPairKey,
  UNIQUE_METERS_TABLE,
  UNIQUE_ROLLUP_TABLE,
} from './unique-rollups-store.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import type { UsageShard, UsageShards } from '../../../shared/clients/usage-shards.js';

import type { UniqueMeter } from './store.js';

export { uniqueCountMeters, type UniqueMeter } from './store.js';

/** Backfills every meter of `meters` whose distinct sets are not ready; returns their ids. */
export async function backfillUniqueMeters(
  shards: UsageShards,
  database: string,
  meters: readonly UniqueMeter[],
): Promise<string[]> {
  const done: string[] = [];
  for (const m of await notReady(shards, database, meters)) {
    await backfillUniqueMeter(shards, database, m);
    done.push(m.meterId);
  }
  return done;
}

/** The meters of `meters` whose sets readers may not use yet: one lookup per shard. */
async function notReady(shards: UsageShards, database: string, meters: readonly UniqueMeter[]): Promise<UniqueMeter[]> {
  const byShard = new Map<UsageShard, UniqueMeter[]>();
  for (const m of meters) {
    const shard = shards.of(m.accountId);
    byShard.set(shard, [...(byShard.get(shard) ?? []), m]);
  }
  const out: UniqueMeter[] = [];
  for (const [shard, ms] of byShard) {
    await shard.syncReplica(UNIQUE_METERS_TABLE);
    const pairs = `(account_id, meter_id) IN (${ms.map((m) => `(${chString(m.accountId)}, ${chString(m.meterId)})`).join(', ')})`;
    const ready = await shard.replicas.run((ch) => uniqueKeysOf(ch, database, pairs, shard.local, true));
    out.push(...ms.filter((m) => !ready.has(meterPairKey(m))));
  }
  return out;
}

/** Steps 1–3 above for one meter. */
export async function backfillUniqueMeter(shards: UsageShards, database: string, m: UniqueMeter): Promise<void> {
  const shard = shards.of(m.accountId);
  const { local } = shard;
  await registerUniqueMeter(shard, database, m, false);
  await shard.syncReplica(USAGE_TABLE);
  const hours = await shard.replicas.run((ch) => recordedHours(ch, database, m, local));
  await shard.replicas.run((ch) =>
    recomputeHours(ch, database, [{ accountId: m.accountId, meterId: m.meterId, hours }], local),
  );
  // Readers on the shard's other replica switch only once it holds the sets.
  await shard.syncEveryReplica(UNIQUE_ROLLUP_TABLE);
  await registerUniqueMeter(shard, database, m, true);
}
