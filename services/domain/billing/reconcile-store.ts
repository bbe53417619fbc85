import type { PgPool } from '../../../shared/clients/postgres.js';
import { inScope, type BillingScope } from './scope.js';

/** A payment attempt left `unknown`, with what it takes to ask the processor about it (reconcile.ts). */
export interface UnknownAttempt {
  invoice_id: string;
  attempt: number;
  idempotency_key: string;
  account_id: string;
  amount_due: string;
  currency: string;
  pm_id: string;
  pm_token: string;
}

/** The scope's attempts left `unknown`, oldest first, 1000 at most (the next run takes the rest). */
export async function unknownAttempts(pg: PgPool, scope: BillingScope): Promise<UnknownAttempt[]> {
  const r = await pg.query<UnknownAttempt>(
    `SELECT pa.invoice_id, pa.attempt, pa.idempotency_key, i.account_id, (i.amount - i.amount_credited)::text AS amount_due,
            i.currency, pm.id AS pm_id, pm.processor_token AS pm_token
       FROM payment_attempts pa JOIN invoices i ON i.id = pa.invoice_id JOIN payment_methods pm ON pm.id = pa.payment_method_id
      WHERE pa.status = 'unknown' AND ${inScope('i.account_id', '$1')}
      ORDER BY pa.created_at LIMIT 1000`,
    [scope.clockId],
  );
  return r.rows;
}

/** Attempts the processor never made go back to `pending` (only while still `unknown`). */
export async function unknownBackToPending(
  pg: PgPool,
  attempts: readonly Pick<UnknownAttempt, 'invoice_id' | 'attempt'>[],
): Promise<void> {
  await pg.query(
    `UPDATE payment_attempts SET status = 'pending'
      WHERE (invoice_id, attempt) IN (SELECT * FROM unnest($1::text[], $2::int[])) AND status = 'unknown'`,
    [attempts.map((a) => a.invoice_id), attempts.map((a) => a.attempt)],
  );
}
