import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import { hasPrefix } from '../../../shared/ids.js';
import { appendEvent } from '../events/outbox-store.js';
import { periodContaining, scheduleOf, usageSchedule } from '../subscriptions/periods.js';
import { findCoupon } from './store.js';
import { endCurrentRedemption, insertRedemption, openRedemptions, takeRedemptionSlot } from './redemptions-store.js';
import type { CurrentDiscount } from './types.js';
import type { Subscription } from '../subscriptions/types.js';
import { subscriptionUpdated } from '../subscriptions/events.js';
import { currentCouponId } from '../subscriptions/store.js';
import { couponCurrencies, couponTermsIn } from '../pricing/price-books.js';

const field = 'coupon_id';

/**
 * THE rule of applying a coupon to a subscription (PATCH coupon_id, or at creation), in the caller's transaction,
 * with the subscription's row locked: `null` removes the current coupon, another id replaces it. The new one
 * discounts from the current usage period on (the period of `now`, the account's time; the month inside a quarter
 * or a year) and the advance invoices due from `now`; the one it replaces or removes stops there
 * (services/domain/billing/coupon-periods.ts says which invoices each reaches). Applying the coupon already on the subscription changes nothing. Checks, each
 * a precise problem: unknown coupon (422 coupon_id), an amount_off coupon with no amount in the
 * subscription's currency, its own or a currency option (422 coupon_currency_mismatch), expired (409 coupon_expired), no redemption left (409 coupon_max_redemptions_reached —
 * counted by one conditional UPDATE, so of two concurrent redemptions of the last slot exactly one wins).
 * Returns whether anything changed; a change appends `subscription.updated` with the coupon.
 */
export async function setSubscriptionCoupon(
  client: PgClient,
  subscription: Subscription,
  couponId: string | null,
  now: Date,
  /** At creation the subscription's own `subscription.updated` is the one event of the request. */
  opts: { emit?: boolean } = {},
): Promise<boolean> {
  const sub = subscription.row;
  if (sub.status === 'canceled')
    throw new ConflictError(`Subscription ${sub.id} is canceled and can no longer change.`, 'subscription_canceled');
  const was = await currentCouponId(client, sub.id);
  if (was === couponId) return false;
  const periodStart = usagePeriodStart(sub, now);
  if (couponId !== null) await countRedemption(client, couponId, sub.currency, now);
  await endCurrentRedemption(client, sub.id, now, periodStart);
  if (couponId !== null)
    await insertRedemption(client, {
      couponId,
      subscriptionId: sub.id,
      accountId: sub.account_id,
      firstPeriodStart: periodStart,
      redeemedAt: now,
    });
  if (opts.emit === false) return true;
  await appendEvent(client, subscriptionUpdated({ subscription, couponId }, { subscription, couponId: was }));
  return true;
}

/** The start of the usage period containing `at` (the first during a trial): where a coupon change takes effect. */
function usagePeriodStart(sub: Subscription['row'], at: Date): Date {
  return periodContaining(usageSchedule(scheduleOf(sub)), at).start;
}

/** Takes one redemption of the coupon, or says precisely why not. */
async function countRedemption(client: PgClient, couponId: string, currency: string, now: Date): Promise<void> {
  const unknown = () => new ValidationError([{ field, message: `no coupon ${couponId}` }]);
  if (!hasPrefix(couponId, 'coupon')) throw unknown();
  const coupon = await findCoupon(client, couponId);
  if (!coupon) throw unknown();
  if (couponTermsIn(coupon, currency) === null)
    throw new ValidationError(
      [
        {
          field,
          message: `has no amount_off in ${currency}, the subscription's currency (it has ${couponCurrencies(coupon).join(', ')})`,
        },
      ],
      undefined,
      'coupon_currency_mismatch',
    );
  if (coupon.expires_at && coupon.expires_at.getTime() <= now.getTime())
    throw new ConflictError(`Coupon ${couponId} expired at ${coupon.expires_at.toISOString()}.`, 'coupon_expired', [
      { field, message: 'expired' },
    ]);
  // Checked and counted in one statement: a concurrent redemption of the last slot waits for this row and then
  // finds it full.
  if (!(await takeRedemptionSlot(client, couponId)))
    throw new ConflictError(
      `Coupon ${couponId} was redeemed ${coupon.max_redemptions} times, its max_redemptions.`,
      'coupon_max_redemptions_reached',
      [{ field, message: 'has no redemption left' }],
    );
}

/** The current discount of each subscription (its coupon and from when), for the API's representation. */
export async function currentDiscounts(
  q: PgPool | PgClient,
  subscriptionIds: string[],
): Promise<Map<string, CurrentDiscount>> {
  const out = new Map<string, CurrentDiscount>();
  if (subscriptionIds.length === 0) return out;
  const rows = await openRedemptions(q, subscriptionIds);
  for (const { subscription_id, first_period_start, redeemed_at, ...coupon } of rows)
    out.set(subscription_id, { coupon, first_period_start, redeemed_at });
  return out;
}
