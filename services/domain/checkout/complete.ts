import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { ThresholdMinimums } from '../../../shared/money/threshold-minimums.js';
import { subscribe } from '../billing/subscribe.js';
import { appendEvent } from '../events/outbox-store.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { saveProcessorCard } from '../payment-methods/save.js';
import { redeemPromotionCode } from '../promotion-codes/redeem.js';
import { findCheckoutSession, markCheckoutComplete } from './store.js';
import { checkoutStatus, type CheckoutSessionRow } from './types.js';

/** What completing a checkout needs besides the session: the card the page set up and the code typed, if any. */
export interface Completion {
  sessionId: string;
  /** The processor's id of the card the customer set up in the card element (pm_…). */
  paymentMethod: string;
  promotionCode?: string;
  processor: PaymentProcessor;
  fingerprintKey: Buffer;
  maxPaymentMethods: number;
  thresholdMinimums: ThresholdMinimums;
  now: Date;
}

/**
 * THE completion of a checkout session (docs/checkout.md), once whatever happens: the session's row is locked, so a
 * double click, a refresh or a second tab waits and then finds it complete and is told the same redirect. In one
 * transaction: the promotion code redeemed (when the session allows codes), the card saved as the customer's default
 * (a decline refuses it all: nothing redeemed or subscribed), the subscription made by the one subscribe() with the
 * plan, trial and coupon, the session marked complete with its subscription (UNIQUE), `checkout.session.completed`.
 * The first invoice is then issued and charged to that card by the billing engine, as for any subscription.
 */
export async function completeCheckout(pg: PgPool, c: Completion): Promise<CheckoutSessionRow> {
  return withTransaction(pg, async (client) => {
    const session = await findCheckoutSession(client, c.sessionId, { lock: true });
    if (!session) throw new NotFoundError('This checkout does not exist.');
    const state = checkoutStatus(session, c.now);
    if (state === 'complete') return session;
    if (state === 'expired') throw checkoutExpired(session);
    if (!session.account_id)
      throw new ValidationError([{ field: 'payment_method', message: 'set up a card on this checkout’s page first' }]);
    const promo = await promotionOf(client, session, c.promotionCode, c.now);
    const couponId = session.coupon_id ?? promo?.coupon_id ?? null;
    // Before subscribe() locks the account's row: the card is saved on a connection of its own (its own commit).
    await saveProcessorCard(pg, {
      processor: c.processor,
      fingerprintKey: c.fingerprintKey,
      accountId: session.account_id,
      token: c.paymentMethod,
      maxPaymentMethods: c.maxPaymentMethods,
      makeDefault: true,
    });
    const { subscription, now } = await subscribe(client, {
      accountId: session.account_id,
      items: [],
      plan: { id: session.plan_id, version: session.plan_version ?? undefined },
      billingThreshold: null,
      couponId,
      terms: session.trial_days === null ? {} : { trial_days: session.trial_days },
      byOperator: true,
      operatorManaged: true,
      thresholdMinimums: c.thresholdMinimums,
    });
    const done = await markCheckoutComplete(client, session.id, {
      subscriptionId: subscription.row.id,
      promotionCodeId: promo?.id ?? null,
      at: now,
    });
    await appendEvent(client, {
      accountId: session.account_id,
      type: 'checkout.session.completed',
      data: {
        checkout_session_id: session.id,
        subscription_id: subscription.row.id,
        plan_id: subscription.row.plan_id ?? session.plan_id,
        plan_version: subscription.row.plan_version ?? session.plan_version ?? 1,
        coupon_id: couponId,
        promotion_code_id: promo?.id ?? null,
        customer_created: session.customer_email !== null,
      },
    });
    return done;
  });
}

export const checkoutExpired = (s: Pick<CheckoutSessionRow, 'id' | 'expires_at'>) =>
  new ConflictError(`Checkout session ${s.id} expired at ${s.expires_at.toISOString()}.`, 'checkout_session_expired');

/** The promotion code typed on the page, redeemed — only on a session that takes codes. */
async function promotionOf(client: PgClient, s: CheckoutSessionRow, typed: string | undefined, now: Date) {
  if (typed === undefined || typed.trim() === '') return null;
  if (!s.allow_promotion_codes)
    throw new ValidationError(
      [{ field: 'promotion_code', message: 'this checkout takes no promotion code' }],
      'This checkout takes no promotion code.',
      'promotion_codes_not_allowed',
    );
  return redeemPromotionCode(client, typed, s.account_id, now);
}
