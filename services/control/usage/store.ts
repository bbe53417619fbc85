import type { PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { MeterType } from '../../../shared/meters/record.js';

/** What a usage query needs to know about the meter; another account's meter is "does not exist". */
export async function meterForUsage(pg: PgPool, accountId: string, meterId: string): Promise<{ type: MeterType; aggregation: string; unit: string }> {
  const { rows } = await pg.query<{ type: MeterType; aggregation: string; unit: string }>('SELECT type, aggregation, unit FROM meters WHERE id = $1 AND account_id = $2', [
    meterId,
    accountId,
  ]);
  if (!rows[0]) throw new NotFoundError(`Meter ${meterId} does not exist.`);
  return rows[0];
}
