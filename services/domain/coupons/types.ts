import type { CouponDuration } from '../../../shared/vocabulary.js';
import type { CouponCurrencyOptions } from '../pricing/price-books.js';

/** A coupon as stored (infra/migrations/postgres/670_coupons.sql); money and percentages as exact decimal text. */
export interface CouponRow {
  id: string;
  name: string;
  percent_off: string | null;
  amount_off: string | null;
  currency: string | null;
  /** Price books (migration 860): amount_off in other currencies than `currency`; {} for percent_off coupons. */
  currency_options: CouponCurrencyOptions;
  duration: CouponDuration;
  duration_in_periods: number | null;
  max_redemptions: number | null;
  times_redeemed: number;
  expires_at: Date | null;
  created_at: Date;
}

export type NewCoupon = Omit<CouponRow, 'id' | 'times_redeemed' | 'created_at'>;

/** What a discount needs of its coupon: its terms. */
export type CouponTerms = Pick<CouponRow, 'id' | 'name' | 'percent_off' | 'amount_off' | 'currency'> &
  Partial<Pick<CouponRow, 'currency_options'>>;

/** A subscription's current redemption, with its coupon. */
export interface CurrentDiscount {
  coupon: CouponRow;
  first_period_start: Date;
  redeemed_at: Date;
}
