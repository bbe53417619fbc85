import type { PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { MeterType } from '../../../shared/meters/record.js';

/** What a usage query needs to know about the meter; another account's meter is "does not exist". */
export interface UsageMeter {
  type: MeterType;
  aggregation: string;
  unit: string;
  dimensions: string[];
  unique_by: string | null;
}

export async function meterForUsage(pg: PgPool, accountId: string, meterId: string): Promise<UsageMeter> {
  const { rows } = await pg.query<UsageMeter>('SELECT type, aggregation, unit, dimensions, unique_by FROM meters WHERE id = $1 AND account_id = $2', [
    meterId,
    accountId,
  ]);
  if (!rows[0]) throw new NotFoundError(`Meter ${meterId} does not exist.`);
  return rows[0];
}
