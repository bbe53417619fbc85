import { JsonDecimal } from '../../../shared/money/json.js';
import type { CouponRow, CurrentDiscount } from '../../domain/coupons/types.js';

/** A coupon as the API shows it; percentages and amounts as exact JSON numbers. */
export function toCoupon(c: CouponRow) {
  return {
    id: c.id,
    name: c.name,
    percent_off: c.percent_off === null ? null : new JsonDecimal(c.percent_off),
    amount_off: c.amount_off === null ? null : new JsonDecimal(c.amount_off),
    currency: c.currency,
    currency_options: Object.fromEntries(
      Object.entries(c.currency_options ?? {}).map(([code, o]) => [
        code,
        { amount_off: new JsonDecimal(o.amount_off) },
      ]),
    ),
    duration: c.duration,
    duration_in_periods: c.duration_in_periods,
    max_redemptions: c.max_redemptions,
    times_redeemed: c.times_redeemed,
    expires_at: c.expires_at ? c.expires_at.toISOString() : null,
    created_at: c.created_at.toISOString(),
  };
}

/** A subscription's current discount, or null. */
export function toDiscount(d: CurrentDiscount | null | undefined) {
  if (!d) return null;
  // Its terms only: the customer reads it too (shared/api/coupons.ts DiscountCouponSchema).
  const { id, name, percent_off, amount_off, currency, currency_options, duration, duration_in_periods } = toCoupon(
    d.coupon,
  );
  return {
    coupon: { id, name, percent_off, amount_off, currency, currency_options, duration, duration_in_periods },
    start: d.first_period_start.toISOString(),
    redeemed_at: d.redeemed_at.toISOString(),
  };
}
