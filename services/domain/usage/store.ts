import type pg from 'pg';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { MeterType } from '../../../shared/meters/record.js';
import type { MeterPair } from './unique-rollups-store.js';

/** What a usage query needs to know about the meter (the account's or the deployment's); another account's meter is "does not exist". */
export interface UsageMeter {
  type: MeterType;
  aggregation: string;
  unit: string;
  dimensions: string[];
  unique_by: string | null;
  /** `deployment`: one meter of every customer, its usage kept per customer account (operator mode). */
  scope: 'account' | 'deployment';
  /** Whether the correction log holds any correction of the meter (logged before ClickHouse is touched). */
  corrected: boolean;
}

export async function meterForUsage(pg: PgPool, accountId: string, meterId: string): Promise<UsageMeter> {
  const { rows } = await pg.query<UsageMeter>(
    `SELECT type, aggregation, unit, dimensions, unique_by, scope,
        EXISTS (SELECT 1 FROM usage_corrections c
                 WHERE c.meter_id = m.id AND (m.scope = 'deployment' OR c.account_id = m.account_id)) AS corrected
       FROM meters m WHERE id = $1 AND (account_id = $2 OR scope = 'deployment')`,
    [meterId, accountId],
  );
  if (!rows[0]) throw new NotFoundError(`Meter ${meterId} does not exist.`);
  return rows[0];
}

/** A unique_count meter and the dimension it counts distinct values of (unique-backfill.ts). */
export interface UniqueMeter extends MeterPair {
  uniqueBy: string;
}

/** Every unique_count meter of every account (the backfill's candidates; most deployments have few). */
export async function uniqueCountMeters(db: pg.ClientBase): Promise<UniqueMeter[]> {
  const { rows } = await db.query<{ account_id: string; id: string; unique_by: string }>(
    `SELECT account_id, id, unique_by FROM meters WHERE unique_by IS NOT NULL ORDER BY account_id, id`,
  );
  return rows.map((r) => ({ accountId: r.account_id, meterId: r.id, uniqueBy: r.unique_by }));
}
