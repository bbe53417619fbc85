import type { PgPool } from '../../../shared/clients/postgres.js';
import { applyCorrectionToUsage } from '../usage/corrections-store.js';
import type { UsageShards } from '../../../shared/clients/usage-shards.js';
import {
  markCorrectionApplied,
  pendingCorrections,
  pendingCorrectionsOfMeter,
  withMeterCorrectionLock,
} from './store.js';
import type { CorrectionRow } from './types.js';
import type { UsageMoved } from '../usage/usage-moved.js';

/**
 * Steps 2 and 3 of a correction (step 1 recorded it pending): its effect in ClickHouse on the account's shard,
 * then the state applied. Safe to repeat: a correction found pending is simply applied again.
 */
export async function applyCorrection(
  pg: PgPool,
  shards: UsageShards,
  database: string,
  row: CorrectionRow,
  moved?: UsageMoved,
): Promise<CorrectionRow> {
  const replace =
    row.kind === 'replace'
      ? {
          startMs: row.replace_start!.getTime(),
          endMs: row.replace_end!.getTime(),
          ids: row.replacement_ids,
          rows: row.replacement_rows,
        }
      : undefined;
  await applyCorrectionToUsage(shards.of(row.account_id), database, {
    id: row.id,
    accountId: row.account_id,
    meterId: row.meter_id,
    cancelIds: row.cancel_ids,
    replace,
  });
  // Readable now: in-memory readers of the account's usage (entitlement checks) re-read it.
  moved?.moved([row.account_id]);
  return markCorrectionApplied(pg, row.id);
}

/**
 * Applies the meter's pending corrections, oldest first. Call it holding the meter's correction lock: a request
 * holds that lock from recording its correction to applying it, so what is pending then was interrupted.
 */
export async function completePendingOfMeter(
  pg: PgPool,
  shards: UsageShards,
  database: string,
  accountId: string,
  meterId: string,
  moved?: UsageMoved,
): Promise<number> {
  const rows = await pendingCorrectionsOfMeter(pg, accountId, meterId);
  for (const row of rows) await applyCorrection(pg, shards, database, row, moved);
  return rows.length;
}

/**
 * Completes the corrections left pending for longer than `graceMs` (a request that failed or whose process
 * died between recording and applying), each meter's under its lock and in order; returns how many it applied.
 */
export async function completePendingCorrections(
  pg: PgPool,
  shards: UsageShards,
  database: string,
  graceMs: number,
  batch = 100,
  moved?: UsageMoved,
): Promise<number> {
  const meters = new Map(
    (await pendingCorrections(pg, graceMs, batch)).map((r) => [`${r.account_id}:${r.meter_id}`, r] as const),
  );
  let applied = 0;
  for (const r of meters.values())
    applied += await withMeterCorrectionLock(pg, r.account_id, r.meter_id, () =>
      completePendingOfMeter(pg, shards, database, r.account_id, r.meter_id, moved),
    );
  return applied;
}
