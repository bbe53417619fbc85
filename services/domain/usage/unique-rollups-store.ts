/**
 * Exact unique counts from rollups (issue 18; infra/migrations/clickhouse/340_usage_unique_hourly.sql). A
 * unique_count meter registered in `usage_unique_meters` gets, next to its usage_hourly rows, one
 * `usage_unique_hourly` row per (hour, set of its other dimensions) holding the hour's records, sum and the
 * exact set of its unique_by values as a uniqExact state. A read merges those states per window
 * (uniqExactIfMerge): a day's count is the union of its hours' sets — exact, and O(windows × groups) rows
 * however many distinct values there are. usage_hourly keeps its rows keyed by the whole dimension set: they
 * answer reads that filter or group by the unique dimension itself, and meters registered before this table.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { dimensionSql } from '../../../shared/usage/dimensions.js';
import { chString, groupKeySql, HOUR_MS } from './sql.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import type { UsageShard } from '../../../shared/clients/usage-shards.js';

export const UNIQUE_METERS_TABLE = 'usage_unique_meters';
export const UNIQUE_ROLLUP_TABLE = 'usage_unique_hourly';

/** The state type of `usage_unique_hourly.uniques`: values '' (records without the dimension) are left out. */
export const UNIQUES_STATE = (key: string) => `uniqExactIfState(${dimensionSql(key)}, ${dimensionSql(key)} != '')`;
export const UNIQUES_MERGE = 'uniqExactIfMerge';

/** A meter of a recompute or a read: the pair as the tables key it. */
export interface MeterPair {
  accountId: string;
  meterId: string;
}

const pairKey = (p: MeterPair) => `${p.accountId}\u0000${p.meterId}`;

/**
 * Registers a unique_count meter for per-hour distinct sets, on the shard owning its account and on every
 * reachable replica of it — before the meter is usable (its Postgres commit and registry put), so that every
 * recompute of its hours, on any replica, writes the state. `ready` = false registers a meter that already has
 * records (services/domain/usage/unique-backfill.ts): recomputes write its sets, reads don't use them yet.
 */
export async function registerUniqueMeter(
  shard: UsageShard,
  database: string,
  m: MeterPair & { uniqueBy: string },
  ready = true,
): Promise<void> {
  dimensionSql(m.uniqueBy); // checks the key's syntax before it goes into SQL
  await shard.replicas.run((ch) =>
    ch.insert({
      table: `${database}.${UNIQUE_METERS_TABLE}${shard.local}`,
      values: [
        {
          account_id: m.accountId,
          meter_id: m.meterId,
          unique_by: m.uniqueBy,
          created_ms: Date.now(),
          ready: ready ? 1 : 0,
        },
      ],
      format: 'JSONEachRow',
    }),
  );
  await shard.syncEveryReplica(UNIQUE_METERS_TABLE);
}

/**
 * The unique_by dimension of each registered meter among `pairs` (by `account\0meter`). `pairsSql` is the
 * `(account_id, meter_id) IN (…)` condition of the same pairs; `local` as in recomputeHours. Writers take every
 * registered meter; `readyOnly` (readers) only those whose sets cover all their hours.
 */
export async function uniqueKeysOf(
  ch: ClickHouseClient,
  database: string,
  pairsSql: string,
  local = '',
  readyOnly = false,
): Promise<Map<string, string>> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, any(unique_by) AS u FROM ${database}.${UNIQUE_METERS_TABLE}${local} WHERE ${pairsSql}
      GROUP BY account_id, meter_id${readyOnly ? ' HAVING max(ready) = 1' : ''}`,
    format: 'JSONEachRow',
  });
  const out = new Map<string, string>();
  for (const r of await rs.json<{ a: string; m: string; u: string }>())
    out.set(pairKey({ accountId: r.a, meterId: r.m }), r.u);
  return out;
}

/** How long a reader trusts that a meter is NOT registered (a registration is forever: positives are kept). */
const UNREGISTERED_TTL_MS = 5_000;
const registered = new Map<string, string>();
const unregistered = new Map<string, number>();

/**
 * Which of `pairs` a read may answer from per-hour distinct sets counting `uniqueBy` (registered with that
 * dimension and ready), by `account\0meter`. Cached per process: a ready registration never goes away.
 */
export async function readableUniqueStates(
  ch: ClickHouseClient,
  database: string,
  pairs: readonly (MeterPair & { uniqueBy: string })[],
): Promise<Set<string>> {
  const now = Date.now();
  const unknown = pairs.filter((p) => {
    const k = `${database}\u0000${pairKey(p)}`;
    return !registered.has(k) && !((unregistered.get(k) ?? 0) > now);
  });
  if (unknown.length) {
    const inList = [...new Set(unknown.map((p) => `(${chString(p.accountId)}, ${chString(p.meterId)})`))].join(', ');
    const found = await uniqueKeysOf(ch, database, `(account_id, meter_id) IN (${inList})`, '', true);
    for (const p of unknown) {
      const k = `${database}\u0000${pairKey(p)}`;
      const key = found.get(pairKey(p));
      if (key !== undefined) registered.set(k, key);
      else unregistered.set(k, now + UNREGISTERED_TTL_MS);
    }
  }
  return new Set(pairs.filter((p) => registered.get(`${database}\u0000${pairKey(p)}`) === p.uniqueBy).map(pairKey));
}

export { pairKey as meterPairKey };

/**
 * The INSERT … SELECT recomputing the distinct-set rows of `conditions` (hour ranges of meters counting
 * `uniqueBy`) from their deduplicated raw rows: grouped by the other dimensions and by `cancelledSql` (a
 * condition, or '0' for meters never corrected), versioned by `versionSql(n, cancelled)` — the rule of
 * recomputeHours, whose comment says why a later snapshot wins.
 */
export function uniqueRecomputeSql(
  database: string,
  local: string,
  uniqueBy: string,
  conditions: string,
  cancelledSql: string,
  versionSql: (n: string, cancelled: string) => string,
): string {
  const key = chString(uniqueBy);
  return `INSERT INTO ${database}.${UNIQUE_ROLLUP_TABLE}${local} (account_id, meter_id, hour, group_key, dim_keys, dim_values, records, sum, uniques, version)
    SELECT account_id, meter_id, hour, ${groupKeySql('ks', 'vs')}, ks, vs, if(cancelled, toUInt64(0), n), s, us, ${versionSql('n', 'cancelled')}
    FROM (
      SELECT account_id, meter_id, intDiv(ts_ms, ${HOUR_MS}) AS hour, arrayFilter(k -> k != ${key}, dim_keys) AS ks,
        arrayFilter((v, k) -> k != ${key}, dim_values, dim_keys) AS vs, ${cancelledSql} AS cancelled, count() AS n, sum(value) AS s, ${UNIQUES_STATE(uniqueBy)} AS us
      FROM ${database}.${USAGE_TABLE}${local} FINAL
      WHERE ${conditions}
      GROUP BY account_id, meter_id, hour, ks, vs, cancelled
    )`;
}
