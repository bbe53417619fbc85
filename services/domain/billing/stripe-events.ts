import type Stripe from 'stripe';
import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvents } from '../events/outbox-store.js';
import { settleAttempts } from './payment-outcomes.js';
import { setDisputeStatus } from './payment-outcomes-store.js';
import type { ChargeResult } from '../payments/processor.js';
import { outcomeOfIntent } from '../payments/stripe.js';
import { claimStripeEvent } from '../payments/stripe-store.js';
import { failSettledRefund } from '../credit-notes/store.js';
import type { HostedLinks } from '../hosted-pages/links.js';

/**
 * Stripe's webhook events applied to meterline (docs/payments.md "Webhooks"). Each event is applied at most once
 * (stripe_events, in the same transaction as its effect), and in any order: an attempt's transitions are guarded
 * (settleAttempts), a dispute's creation never overwrites its close. Events meterline has nothing to do for are
 * recorded and acknowledged.
 */
export type StripeEventOutcome = 'applied' | 'duplicate' | 'ignored';

export async function applyStripeEvent(
  pg: PgPool,
  event: Stripe.Event,
  now: Date,
  links?: HostedLinks,
): Promise<StripeEventOutcome> {
  return withTransaction(pg, async (client) => {
    if (!(await claimStripeEvent(client, event.id, event.type))) return 'duplicate';
    switch (event.type) {
      case 'payment_intent.succeeded':
      case 'payment_intent.payment_failed':
      case 'payment_intent.requires_action':
        return settleIntent(client, event.type, event.data.object, now, links);
      case 'charge.dispute.created':
      case 'charge.dispute.closed':
        return recordDispute(client, event.type, event.data.object);
      case 'refund.failed':
      case 'refund.updated':
      case 'charge.refund.updated':
        return recordLateRefundFailure(client, event.data.object);
      default:
        // setup_intent.succeeded (the card was saved when it was added), charge.refunded (refunds complete when
        // Stripe answers the credit note's call), and every other type: nothing to change.
        return 'ignored';
    }
  });
}

/** The attempt named in the PaymentIntent's metadata, settled with what the event says happened. */
async function settleIntent(
  client: PgClient,
  type: 'payment_intent.succeeded' | 'payment_intent.payment_failed' | 'payment_intent.requires_action',
  pi: Stripe.PaymentIntent,
  now: Date,
  links?: HostedLinks,
): Promise<StripeEventOutcome> {
  const invoiceId = pi.metadata.invoice_id;
  const attempt = Number(pi.metadata.attempt);
  if (!invoiceId || !Number.isInteger(attempt)) return 'ignored';
  const snapshot = outcomeOfIntent(pi);
  const result: ChargeResult | null =
    type === 'payment_intent.succeeded'
      ? { status: 'succeeded', id: pi.id }
      : type === 'payment_intent.requires_action'
        ? { status: 'requires_action', id: pi.id }
        : snapshot?.status === 'failed'
          ? snapshot
          : { status: 'failed', failure_code: 'card_declined' };
  const done = await settleAttempts(client, [{ invoiceId, attempt, result }], now, links);
  return done.length ? 'applied' : 'ignored';
}

/**
 * A refund that failed after Stripe accepted it (the three event types Stripe sends for it carry the same Refund):
 * its credit note shows the failure and gives its amount back to the invoice, once.
 */
async function recordLateRefundFailure(client: PgClient, refund: Stripe.Refund): Promise<StripeEventOutcome> {
  if (refund.status !== 'failed') return 'ignored';
  return (await failSettledRefund(client, refund.id, refund.failure_reason ?? 'refund_failed')) ? 'applied' : 'ignored';
}

/** The dispute on the invoice paid by the disputed PaymentIntent, and its event. */
async function recordDispute(
  client: PgClient,
  type: 'charge.dispute.created' | 'charge.dispute.closed',
  dispute: Stripe.Dispute,
): Promise<StripeEventOutcome> {
  const pi = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : dispute.payment_intent?.id;
  if (!pi) return 'ignored';
  const closed = type === 'charge.dispute.closed';
  const inv = await setDisputeStatus(client, pi, dispute.status, closed);
  if (!inv) return 'ignored';
  await appendEvents(client, [
    {
      accountId: inv.account_id,
      type: closed ? 'invoice.dispute_closed' : 'invoice.disputed',
      data: {
        invoice_id: inv.id,
        amount: new JsonDecimal(inv.amount),
        currency: inv.currency,
        dispute_id: dispute.id,
        reason: dispute.reason,
        status: dispute.status,
      },
    },
  ]);
  return 'applied';
}
