import type { PgClient } from '../../../shared/clients/postgres.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvents, type NewEvent } from '../events/outbox-store.js';
import { invoicePaid } from '../invoices/events.js';
import type { ChargeResult } from '../payments/processor.js';
import { nextPaymentAttemptAt } from './dunning.js';
import { hostedInvoiceUrl, type HostedLinks } from '../hosted-pages/links.js';
import { invoiceLinkStates } from '../hosted-pages/store.js';
import { failTopUps, grantPaidTopUps } from '../credits/top-ups-store.js';
import type { LockedInvoice } from './attempts-store.js';
import {
  attemptsWithInvoices,
  completeOpenAttempts,
  markInvoicesPaid,
  planNextAttempts,
  scheduleAfterFailure,
} from './payment-outcomes-store.js';

/**
 * Step 3 of a payment attempt (payments.ts): what an attempt's outcome does to the attempt, its invoice and the
 * events — applied once per transition, whether the answer came from the charge itself, a processor's webhook or
 * reconciliation.
 */
export interface PaymentOutcome {
  invoice_id: string;
  attempt: number;
  /** requires_action: the bank asks the customer to authenticate (3-D Secure); the invoice stays open. */
  outcome: 'succeeded' | 'failed' | 'requires_action';
  failure_code?: string;
}

export type FailureCode =
  | 'card_declined'
  | 'insufficient_funds'
  | 'expired_card'
  | 'authentication_required'
  | 'processing_error'
  | 'no_payment_method';

export const FAILURE_MESSAGES: Record<FailureCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  authentication_required: 'The bank asks the customer to authenticate the payment (3-D Secure).',
  processing_error: 'The payment processor could not process the charge.',
  no_payment_method: 'The account has no default payment method.',
};

export interface Attempt {
  invoice: LockedInvoice;
  attempt: number;
  manual: boolean;
  pm: { id: string; processor_token: string } | null;
  /** When it was numbered, for an outcome reported later (a webhook, reconciliation); absent: made at `now`. */
  madeAt?: Date;
}

/**
 * The time an attempt's outcome counts from — the invoice's paid_at, dunning's next attempt: when it is applied, but
 * never before the attempt was made. A Stripe webhook is applied at the api's clock, the real time, which can be behind
 * the run that made the attempt (`billing run --now` ahead of it): counted from that earlier time, dunning planned the
 * retry the attempt itself was, and the run's next pass charged again at once.
 */
export function outcomeTime(attempt: Attempt, now: Date): Date {
  return attempt.madeAt && attempt.madeAt > now ? attempt.madeAt : now;
}

export const keyOf = (a: { invoice: { id: string }; attempt: number }) => `${a.invoice.id}:${a.attempt}`;

export interface Charged {
  attempt: Attempt;
  result: ChargeResult | { status: 'failed'; failure_code: 'no_payment_method' };
}

export async function completeAttempts(
  client: PgClient,
  charged: Charged[],
  now: Date,
  links?: HostedLinks,
): Promise<PaymentOutcome[]> {
  if (charged.length === 0) return [];
  const completed = await completeOpenAttempts(
    client,
    charged.map((c) => c.attempt.invoice.id),
    charged.map((c) => c.attempt.attempt),
    charged.map((c) => c.result.status),
    charged.map((c) => (c.result.status === 'failed' ? c.result.failure_code : null)),
    now,
    charged.map((c) => (c.result.status === 'succeeded' || c.result.status === 'requires_action' ? c.result.id : null)),
  );
  const won = new Set(completed.map((x) => `${x.invoice_id}:${x.attempt}`));
  return applyOutcomes(
    client,
    charged.filter((c) => won.has(keyOf(c.attempt))),
    now,
    links,
  );
}

export const outcomeOf = (result: Charged['result']): Pick<PaymentOutcome, 'outcome' | 'failure_code'> =>
  result.status === 'failed' ? { outcome: 'failed', failure_code: result.failure_code } : { outcome: result.status };

/** The invoice side of completed attempts and their events, in the caller's transaction. */
export async function applyOutcomes(
  client: PgClient,
  charged: Charged[],
  now: Date,
  links?: HostedLinks,
): Promise<PaymentOutcome[]> {
  const paid = charged.filter((c) => c.result.status === 'succeeded');
  const failed = charged.filter((c) => c.result.status === 'failed');
  const action = charged.filter((c) => c.result.status === 'requires_action' && !c.attempt.manual);
  if (action.length) {
    // The invoice stays open; dunning's next attempt is planned as after a failure.
    await planNextAttempts(
      client,
      action.map((c) => c.attempt.invoice.id),
      action.map((c) => nextPaymentAttemptAt(c.attempt.invoice.due_at, outcomeTime(c.attempt, now))),
      action.map((c) => JSON.stringify(paymentError(c))),
    );
  }
  if (paid.length) {
    await markInvoicesPaid(
      client,
      paid.map((c) => c.attempt.invoice.id),
      paid.map((c) => outcomeTime(c.attempt, now)),
    );
  }
  // Automatic attempts move the schedule (or end it: uncollectible); a manual one leaves the invoice as it was.
  const scheduled = failed.filter((c) => !c.attempt.manual);
  if (scheduled.length) {
    const next = scheduled.map((c) => nextPaymentAttemptAt(c.attempt.invoice.due_at, outcomeTime(c.attempt, now)));
    await scheduleAfterFailure(
      client,
      scheduled.map((c) => c.attempt.invoice.id),
      next,
      scheduled.map((c) => JSON.stringify(paymentError(c))),
    );
  }
  const waiting = charged.filter((c) => c.result.status === 'requires_action');
  const hosted =
    links && waiting.length
      ? await invoiceLinkStates(
          client,
          waiting.map((c) => c.attempt.invoice.id),
        )
      : null;
  const hostedUrlOf = (invoiceId: string): string | null => {
    const s = hosted?.get(invoiceId);
    return links && s && !s.revoked ? hostedInvoiceUrl(links.key, links.baseUrl, invoiceId, s.generation) : null;
  };
  const events: NewEvent[] = charged.map((c) => {
    const inv = c.attempt.invoice;
    const base = { invoice_id: inv.id, amount: new JsonDecimal(inv.amount), currency: inv.currency };
    if (c.result.status === 'succeeded') return invoicePaid(inv, inv.status);
    if (c.result.status === 'requires_action')
      return {
        accountId: inv.account_id,
        type: 'invoice.payment_action_required',
        data: {
          ...base,
          payment_method_id: c.attempt.pm?.id ?? null,
          attempt_count: c.attempt.attempt,
          // Where the customer completes the challenge (docs/payments.md "Hosted pages").
          ...(links ? { hosted_invoice_url: hostedUrlOf(inv.id) } : {}),
        },
      };
    return {
      accountId: inv.account_id,
      type: 'payment.failed',
      data: {
        ...base,
        payment_method_id: c.attempt.pm?.id ?? null,
        failure_code: c.result.failure_code,
        attempt_count: c.attempt.attempt,
      },
    };
  });
  // A top-up invoice's outcome is its top-up's (docs/credits.md): paid → the grant, in this commit; failed → no grant.
  events.push(
    ...(await grantPaidTopUps(
      client,
      paid.map((c) => c.attempt.invoice.id),
      now,
    )),
    ...(await failTopUps(
      client,
      failed.map((c) => ({
        invoiceId: c.attempt.invoice.id,
        failureCode: (c.result as { failure_code: string }).failure_code,
      })),
      now,
    )),
  );
  await appendEvents(client, events);
  return charged.map((c) => ({ invoice_id: c.attempt.invoice.id, attempt: c.attempt.attempt, ...outcomeOf(c.result) }));
}

/** The invoice's last_payment_error: meterline's code, its message, and the issuer's decline code when given. */
function paymentError(c: Charged): { code: string; message: string; decline_code?: string } {
  const r = c.result;
  const code: FailureCode =
    r.status === 'requires_action' ? 'authentication_required' : (r as { failure_code: FailureCode }).failure_code;
  const decline = 'decline_code' in r ? r.decline_code : undefined;
  return {
    code,
    message: FAILURE_MESSAGES[code] ?? 'The payment failed.',
    ...(decline ? { decline_code: decline } : {}),
  };
}

/**
 * Settles attempts from the processor's own record (a Stripe webhook, reconciliation): each one's outcome applied as
 * if the charge had answered, at most once per transition (completeAttempts' guard), in the caller's transaction.
 * Nothing is locked before that guarded update: attempt row, then invoice — the billing run's own order, so a
 * webhook racing the run's step 3 waits for it instead of deadlocking.
 */
export async function settleAttempts(
  client: PgClient,
  settled: { invoiceId: string; attempt: number; result: ChargeResult }[],
  now: Date,
  links?: HostedLinks,
): Promise<PaymentOutcome[]> {
  if (settled.length === 0) return [];
  const found = await attemptsWithInvoices(
    client,
    settled.map((s) => s.invoiceId),
    settled.map((s) => s.attempt),
  );
  const rows = new Map(found.map((row) => [`${row.id}:${row.attempt}`, row]));
  const charged: Charged[] = settled.flatMap((s) => {
    const row = rows.get(`${s.invoiceId}:${s.attempt}`);
    if (!row) return [];
    const pm = row.pm_id ? { id: row.pm_id, processor_token: row.pm_token! } : null;
    return [
      {
        attempt: { invoice: row, attempt: row.attempt, manual: row.manual, pm, madeAt: row.made_at },
        result: s.result,
      },
    ];
  });
  return completeAttempts(client, charged, now, links);
}
