import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { CouponDuration } from '../../../shared/vocabulary.js';
import type { CouponTerms } from '../coupons/types.js';
import { periodContaining, scheduleOf, usageSchedule, type PeriodSchedule } from '../subscriptions/periods.js';
import { couponCandidates } from './discounts-store.js';

/**
 * Which invoices a coupon discounts (docs/coupons.md "Which invoices"), Stripe's rule on meterline's invoices: a
 * coupon discounts the invoices billed from when it is applied — `once` the next one, `repeating` those of the
 * next duration_in_periods usage periods, `forever` all. A subscription's invoices are:
 * - its usage invoices, one per usage period (its periods; the months inside a quarter or a year), issued at the
 *   period's end: a coupon reaches the one of the period it is applied in and every later one (`start`: that usage
 *   period's start), until the usage period it is removed or replaced in;
 * - the advance invoices of a period longer than a month (its flat items), issued when the period begins (or the
 *   billing starts, if later): a coupon reaches one due at or after it is applied and before it is removed — so one
 *   applied at creation reaches the first, one applied mid-year does not reach that year's (already issued).
 * `repeating` N: those due within N usage periods from `start` (a yearly plan: N months). `once`: the first of them
 * issued — the one whose invoice carries the coupon's own discount (a 0 line "nothing to discount" too) — and no
 * other: a yearly plan with `once` applied at creation discounts its advance invoice, not January's usage too;
 * applied on 15 September, the September usage invoice. Threshold invoices are priced as their usage period and
 * never count (the period's final invoice discounts the whole period and deducts them).
 */
export interface Redemption {
  duration: CouponDuration;
  duration_in_periods: number | null;
  /** The usage period the coupon was applied in (services/domain/coupons/redeem.ts). */
  first_period_start: Date;
  redeemed_at: Date;
  ended_at: Date | null;
  /** The usage period it was removed or replaced in. */
  ended_period_start: Date | null;
}

/** An invoice to price: a usage period (its start), or a period's advance invoice (the period's start). */
export interface CouponSlot {
  subscription_id: string;
  startMs: number;
  advance?: boolean;
}

/** Usage periods from the one starting at `from` to the one containing `atMs` (0: the same), counted up to `limit`. */
function periodsBetween(usage: PeriodSchedule, from: Date, atMs: number, limit: number): number {
  let p = periodContaining(usage, from);
  let n = 0;
  while (p.end.getTime() <= atMs && n < limit) {
    p = periodContaining(usage, p.end);
    n++;
  }
  return n;
}

/**
 * Whether a redemption's time reaches an invoice (its duration window; `once` is then limited to the first invoice
 * by `used`).
 */
export function couponReaches(
  r: Redemption,
  schedule: PeriodSchedule,
  slot: Omit<CouponSlot, 'subscription_id'>,
): boolean {
  const usage = usageSchedule(schedule);
  let at: number;
  if (slot.advance) {
    at = Math.max(slot.startMs, schedule.startsAt.getTime());
    if (at < r.redeemed_at.getTime() || (r.ended_at !== null && at >= r.ended_at.getTime())) return false;
  } else {
    at = slot.startMs;
    if (at < r.first_period_start.getTime()) return false;
    if (r.ended_period_start !== null && at >= r.ended_period_start.getTime()) return false;
  }
  if (r.duration !== 'repeating') return true;
  const n = r.duration_in_periods ?? 1;
  return periodsBetween(usage, r.first_period_start, at, n) < n;
}

export type CoveringCoupon = CouponTerms & { coupon_id: string };

/**
 * THE rule's query: the coupon that discounts each slot's invoice, or null. One query for the batch: every
 * redemption of the subscriptions, and for `once` whether another of the subscription's invoices issued since it
 * was applied already carries its discount.
 */
export async function couponsCovering(q: PgPool | PgClient, slots: CouponSlot[]): Promise<(CoveringCoupon | null)[]> {
  const out: (CoveringCoupon | null)[] = slots.map(() => null);
  if (slots.length === 0) return out;
  const rows = await couponCandidates(
    q,
    slots.map((p) => p.subscription_id),
    slots.map((p) => new Date(p.startMs)),
    slots.map((p) => p.advance === true),
  );
  for (const r of rows) {
    const i = Number(r.n) - 1;
    if (out[i] !== null || r.used) continue;
    if (!couponReaches(r, scheduleOf(r), { startMs: slots[i]!.startMs, advance: slots[i]!.advance })) continue;
    out[i] = {
      coupon_id: r.coupon_id,
      id: r.coupon_id,
      name: r.name,
      percent_off: r.percent_off,
      amount_off: r.amount_off,
      currency: r.currency,
      // Price books: its amount in the invoice's currency when that is not the coupon's own (discounts.ts termsIn).
      currency_options: r.currency_options,
    };
  }
  return out;
}
