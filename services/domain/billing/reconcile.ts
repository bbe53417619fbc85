import { withTransaction } from '../../../shared/clients/postgres.js';
import type { ChargeRequest, ChargeResult } from '../payments/processor.js';
import type { BillingDeps } from './deps.js';
import { settleAttempts, type PaymentOutcome } from './payment-outcomes.js';
import type { BillingScope } from './scope.js';
import { unknownAttempts, unknownBackToPending, type UnknownAttempt } from './reconcile-store.js';

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
  const unknown = await unknownAttempts(deps.pg, scope);
  const settled: { invoiceId: string; attempt: number; result: ChargeResult }[] = [];
  const neverMade: UnknownAttempt[] = [];
  for (const a of unknown) {
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
  if (neverMade.length) await unknownBackToPending(deps.pg, neverMade);
  if (settled.length === 0) return [];
  return withTransaction(deps.pg, (client) => settleAttempts(client, settled, now, deps.hostedLinks));
}
