import type { PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { MeterType } from '../../../shared/meters/record.js';

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
