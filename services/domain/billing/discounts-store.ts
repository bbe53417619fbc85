import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { BillingAnchor, BillingInterval, CouponDuration } from '../../../shared/vocabulary.js';
import type { CouponTerms } from '../coupons/types.js';
import type { CouponCurrencyOptions } from '../pricing/price-books.js';

/**
 * The SQL behind discounts on invoices: the redemptions that may cover an invoice (coupon-periods.ts decides which
 * does), and for late usage the coupon and the amounts already billed of the invoices it adjusts (discounts.ts).
 */

/** A redemption of a slot's subscription, with its coupon and the subscription's schedule (coupon-periods.ts). */
export interface CoveringCandidateRow extends CouponTerms {
  /** The slot's position in the batch, from 1. */
  n: string;
  created_at: Date;
  trial_end: Date | null;
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  first_period_start: Date;
  redeemed_at: Date;
  ended_at: Date | null;
  ended_period_start: Date | null;
  duration: CouponDuration;
  duration_in_periods: number | null;
  coupon_id: string;
  /** `once`: another invoice of the subscription issued since the redemption already carries its discount. */
  used: boolean;
}

/**
 * Every redemption of each slot's subscription (`subscriptionIds[i]`, its invoice's period starting `startsAt[i]`,
 * an advance invoice when `advance[i]`), newest first per slot.
 */
export async function couponCandidates(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  startsAt: Date[],
  advance: boolean[],
): Promise<CoveringCandidateRow[]> {
  const { rows } = await q.query<CoveringCandidateRow>(
    `SELECT c.n::text AS n, s.created_at, s.trial_end, s."interval", s.interval_count, s.billing_anchor,
            r.first_period_start, r.redeemed_at, r.ended_at, r.ended_period_start, cp.duration, cp.duration_in_periods,
            cp.id AS coupon_id, cp.id, cp.name, cp.percent_off::text AS percent_off, cp.amount_off::text AS amount_off, cp.currency, cp.currency_options,
            cp.duration = 'once' AND EXISTS (
              SELECT 1 FROM invoices i JOIN invoice_lines l ON l.invoice_id = i.id
               WHERE i.subscription_id = c.subscription_id AND i.reason IN ('period', 'advance') AND i.status <> 'void'
                 AND i.created_at >= r.redeemed_at
                 AND NOT (i.period_start = d.period_start AND i.reason = CASE WHEN c.advance THEN 'advance' ELSE 'period' END)
                 AND l.type = 'discount' AND l.coupon_id = r.coupon_id AND l.adjusts_invoice_id IS NULL) AS used
       FROM unnest($1::text[], $2::timestamptz[], $3::boolean[]) WITH ORDINALITY AS c(subscription_id, starts_at, advance, n)
       CROSS JOIN LATERAL (SELECT (c.starts_at AT TIME ZONE 'UTC')::date AS period_start) d
       JOIN subscriptions s ON s.id = c.subscription_id
       JOIN coupon_redemptions r ON r.subscription_id = c.subscription_id
       JOIN coupons cp ON cp.id = r.coupon_id
      ORDER BY c.n, r.redeemed_at DESC, r.id DESC`,
    [subscriptionIds, startsAt, advance],
  );
  return rows;
}

/** A coupon's terms as the discount lines take them. */
export type CouponRowTerms = CouponTerms & { coupon_id: string; currency_options?: CouponCurrencyOptions };
const TERMS = (c: string) =>
  `${c}.id AS coupon_id, ${c}.name, ${c}.percent_off::text AS percent_off, ${c}.amount_off::text AS amount_off, ${c}.currency, ${c}.currency_options`;

/** The coupon that discounted each of the invoices (its first own discount line names it), with the invoice's period. */
export async function couponsOfInvoices(
  q: PgPool | PgClient,
  invoiceIds: string[],
): Promise<(CouponRowTerms & { invoice_id: string; period_start: string; period_end: string })[]> {
  const coupons = await q.query<CouponRowTerms & { invoice_id: string; period_start: string; period_end: string }>(
    `SELECT DISTINCT ON (l.invoice_id) l.invoice_id, to_char(i.period_start, 'YYYY-MM-DD') AS period_start,
            to_char(i.period_end, 'YYYY-MM-DD') AS period_end, ${TERMS('cp')}
       FROM invoice_lines l JOIN invoices i ON i.id = l.invoice_id JOIN coupons cp ON cp.id = l.coupon_id
      WHERE l.invoice_id = ANY($1) AND l.type = 'discount' AND l.adjusts_invoice_id IS NULL
      ORDER BY l.invoice_id, l.position`,
    [invoiceIds],
  );
  return coupons.rows;
}

/**
 * Billed for each invoice's period so far, per product: its charges and adjustments (`charge`), and the discount
 * given on them (`discount`). Issued period invoices only: a draft is re-priced whole, a threshold invoice is
 * deducted by its period's invoice.
 */
export async function billedPerProduct(
  q: PgPool | PgClient,
  invoiceIds: string[],
): Promise<{ invoice_id: string; product_id: string; kind: 'charge' | 'discount'; amount: string }[]> {
  const billed = await q.query<{ invoice_id: string; product_id: string; kind: 'charge' | 'discount'; amount: string }>(
    `SELECT COALESCE(x.adjusts_invoice_id, x.invoice_id) AS invoice_id, x.product_id,
            CASE WHEN x.type = 'discount' THEN 'discount' ELSE 'charge' END AS kind, sum(x.amount)::text AS amount
       FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
      WHERE xi.status NOT IN ('void', 'draft') AND xi.reason = 'period' AND x.product_id IS NOT NULL
        AND ((x.invoice_id = ANY($1) AND x.adjusts_invoice_id IS NULL AND x.type IN ('flat', 'usage', 'minimum_commitment', 'discount'))
          OR (x.adjusts_invoice_id = ANY($1) AND x.type IN ('adjustment', 'discount')))
      GROUP BY 1, 2, 3`,
    [invoiceIds],
  );
  return billed.rows;
}
