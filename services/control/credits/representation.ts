import { JsonDecimal } from '../../../shared/money/json.js';
import type { CreditGrantRow } from '../../domain/credits/types.js';

/** The API representation (shared/api/credits.ts) of the domain's rows. */

export function toCreditGrant(r: CreditGrantRow) {
  return {
    id: r.id,
    account_id: r.account_id,
    amount: new JsonDecimal(r.amount),
    remaining: new JsonDecimal(r.remaining),
    currency: r.currency,
    expires_at: r.expires_at ? r.expires_at.toISOString() : null,
    description: r.description,
    created_at: r.created_at.toISOString(),
  };
}
