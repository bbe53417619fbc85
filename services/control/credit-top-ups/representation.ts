import { JsonDecimal } from '../../../shared/money/json.js';
import type { TopUpRow } from '../../domain/credits/types.js';

/** The API representation (shared/api/credit-top-ups.ts) of a top-up row. */
export function toCreditTopUp(r: TopUpRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    amount: new JsonDecimal(r.amount),
    currency: r.currency,
    status: r.status,
    failure_code: r.failure_code,
    trigger: r.trigger,
    invoice_id: r.invoice_id,
    grant_id: r.grant_id,
    created_at: r.created_at.toISOString(),
    completed_at: r.completed_at ? r.completed_at.toISOString() : null,
  };
}
