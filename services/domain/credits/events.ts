import { JsonDecimal } from '../../../shared/money/json.js';
import type { NewEventOf } from '../events/outbox-store.js';

/** The `credit.*` events (shared/api/events.ts), built where the change is made, appended in its transaction. */

export interface GrantFacts {
  id: string;
  account_id: string;
  amount: string;
  currency: string;
  expires_at: Date | null;
}

/** `credit.granted`: a grant was made (by an operator, or bought by a paid top-up). */
export function creditGranted(
  g: GrantFacts,
  source: 'operator' | 'top_up',
  from: { invoiceId?: string; topUpId?: string } = {},
): NewEventOf<'credit.granted'> {
  return {
    accountId: g.account_id,
    type: 'credit.granted',
    data: {
      grant_id: g.id,
      amount: new JsonDecimal(g.amount),
      currency: g.currency,
      expires_at: g.expires_at ? g.expires_at.toISOString() : null,
      source,
      invoice_id: from.invoiceId ?? null,
      top_up_id: from.topUpId ?? null,
    },
  };
}

export interface FailedTopUpFacts {
  id: string;
  account_id: string;
  invoice_id: string;
  amount: string;
  currency: string;
  failure_code: string;
  trigger: 'manual' | 'auto_recharge';
}

/** `credit.top_up.failed`: the charge of a top-up failed, nothing was granted. */
export function topUpFailed(t: FailedTopUpFacts): NewEventOf<'credit.top_up.failed'> {
  return {
    accountId: t.account_id,
    type: 'credit.top_up.failed',
    data: {
      top_up_id: t.id,
      invoice_id: t.invoice_id,
      amount: new JsonDecimal(t.amount),
      currency: t.currency,
      failure_code: t.failure_code,
      trigger: t.trigger,
    },
  };
}
