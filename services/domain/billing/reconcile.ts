import { withTransaction } from '../../../shared/clients/postgres.js';
import type { ChargeRequest, ChargeResult } from '../payments/processor.js';
import type { BillingDeps } from './deps.js';
import { settleAttempts, type PaymentOutcome } from './payment-outcomes.js';
import { inScope, type BillingScope } from './scope.js';

/**
 * Reconciliation (docs/payments.md): every attempt left `unknown` — the processor was called, its answer never came
 * (a timeout, a lost response, a crash before the webhook) — settled from the processor's own record of the charge,
 * found by the attempt's key. One the processor never made goes back to `pending`: the next payment pass charges it
 * with the same key, so it is still charged at most once. Runs at the start of every billing run.
 */
export async function reconcileUnknownAttempts(
  deps: Pick<BillingDeps, 'pg' | 'processor' | 'log' | 'hostedLinks'>,
  now: Date,
  scope: BillingScope,
): Promise<PaymentOutcome[]> {
  const find = deps.processor.findCharge?.bind(deps.processor);
  if (!find) return [];
  const r = await deps.pg.query<{
    invoice_id: string;
    attempt: number;
    idempotency_key: string;
    account_id: string;
    amount_due: string;
    currency: string;
    pm_id: string;
    pm_token: string;
  }>(
    `SELECT pa.invoice_id, pa.attempt, pa.idempotency_key, i.account_id, (i.amount - i.amount_credited)::text AS amount_due,
            i.currency, pm.id AS pm_id, pm.processor_token AS pm_token
       FROM payment_attempts pa JOIN invoices i ON i.id = pa.invoice_id JOIN payment_methods pm ON pm.id = pa.payment_method_id
      WHERE pa.status = 'unknown' AND ${inScope('i.account_id', '$1')}
      ORDER BY pa.created_at LIMIT 1000`,
    [scope.clockId],
  );
  const settled: { invoiceId: string; attempt: number; result: ChargeResult }[] = [];
  const neverMade: typeof r.rows = [];
  for (const a of r.rows) {
    const req: ChargeRequest = {
      paymentMethod: { id: a.pm_id, processor_token: a.pm_token },
      amount: a.amount_due,
      currency: a.currency,
      idempotencyKey: a.idempotency_key,
      accountId: a.account_id,
      invoiceId: a.invoice_id,
      attempt: a.attempt,
    };
    try {
      const result = await find(req);
      if (result) settled.push({ invoiceId: a.invoice_id, attempt: a.attempt, result });
      else neverMade.push(a);
    } catch (err) {
      deps.log.warn(
        { err, invoice_id: a.invoice_id, attempt: a.attempt },
        'reconciliation could not reach the processor; retried next run',
      );
    }
  }
  if (neverMade.length)
    await deps.pg.query(
      `UPDATE payment_attempts SET status = 'pending'
        WHERE (invoice_id, attempt) IN (SELECT * FROM unnest($1::text[], $2::int[])) AND status = 'unknown'`,
      [neverMade.map((a) => a.invoice_id), neverMade.map((a) => a.attempt)],
    );
  if (settled.length === 0) return [];
  return withTransaction(deps.pg, (client) => settleAttempts(client, settled, now, deps.hostedLinks));
}
