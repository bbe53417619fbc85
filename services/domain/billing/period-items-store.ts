import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { MeterType } from '../../../shared/meters/record.js';
import type { ProductPriceRow } from '../pricing/price-models.js';
import type { ProductCurrencyOptions } from '../pricing/price-books.js';
import type { DimensionPrices } from '../pricing/dimension-prices.js';

/** The items a period's invoice bills, the SQL behind price-periods.ts. */

/** SQL twin of billsUsageMonthly (services/domain/subscriptions/periods.ts): a period longer than a month. */
export const LONG_PERIOD = (s: string) =>
  `(${s}."interval" IN ('quarter', 'year') OR (${s}."interval" = 'month' AND ${s}.interval_count > 1))`;

export const PRODUCT_PRICE_COLUMNS = (p: string) =>
  `${p}.pricing, ${p}.price::text AS price, ${p}.tiers_mode, ${p}.tiers, ${p}.package_size::text AS package_size,
   ${p}.currency AS product_currency, ${p}.currency_options`;

export interface ItemRow extends ProductPriceRow {
  /** Price books: the product's own currency and its prices in others (services/domain/pricing/price-books.ts). */
  product_currency: string;
  currency_options: ProductCurrencyOptions;
  subscription_id: string;
  quantity: number;
  /** The item's interval (services/domain/pricing/proration.ts): from null = since the subscription began, to null = still on. */
  effective_from: Date | null;
  effective_to: Date | null;
  product_id: string;
  product_name: string;
  minimum_amount: string | null;
  meter_id: string | null;
  meter_type: MeterType | null;
  aggregation: string | null;
  unit: string | null;
  /** unique_count meters: the dimension counted. */
  unique_by: string | null;
  /** Billing per group (issue 18): the dimension keys; empty: one line. */
  group_by: string[];
  /** Per-dimension prices (issue 46), or null. */
  dimension_prices: DimensionPrices | null;
  /** The subscription's trial end: usage before it is not billed. */
  trial_end: Date | null;
}

/**
 * The items of each subscription (`subscriptionIds[i]`) that were on during its period (`periodStarts[i]` to
 * `periodEnds[i]`; an advance invoice's when `advance[i]`), current ones and those removed or changed during it, in
 * printed order per subscription.
 */
export async function periodItemRows(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  periodStarts: Date[],
  periodEnds: Date[],
  advance: boolean[],
): Promise<ItemRow[]> {
  const r = await q.query<ItemRow>(
    `SELECT si.subscription_id, si.product_id, p.name AS product_name, ${PRODUCT_PRICE_COLUMNS('p')}, si.minimum_amount::text AS minimum_amount,
            si.quantity, NULLIF(si.effective_from, '-infinity') AS effective_from, si.effective_to,
            si.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by, si.group_by, si.dimension_prices, s.trial_end
       FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::boolean[]) AS c(subscription_id, period_start, period_end, advance)
       JOIN subscriptions s ON s.id = c.subscription_id
       JOIN subscription_items si ON si.subscription_id = c.subscription_id AND si.effective_from < c.period_end
                                 AND (si.effective_to IS NULL OR si.effective_to > c.period_start)
                                 -- Periods longer than a month: flat items in advance, usage-priced ones per month.
                                 AND CASE WHEN c.advance THEN si.meter_id IS NULL
                                          WHEN ${LONG_PERIOD('s')} THEN si.meter_id IS NOT NULL ELSE true END
       JOIN products p ON p.id = si.product_id LEFT JOIN meters m ON m.id = si.meter_id
      ORDER BY si.subscription_id, si.position, si.effective_from`,
    [subscriptionIds, periodStarts, periodEnds, advance],
  );
  return r.rows;
}
