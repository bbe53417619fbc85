import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { MeterType } from '../../../shared/meters/record.js';
import type { PriceModel } from '../pricing/price-models.js';
import type { LineDimensions, PriceSnapshot } from '../pricing/invoice-lines.js';

/**
 * Late usage, the SQL: the usage lines of each subscription's invoices of the `lookbackMonths` periods before
 * `periodStarts[i]`, with what was billed for each so far — ungrouped items for price-periods.ts, grouped ones per
 * group for group-adjustments.ts.
 */

/** An item of an earlier invoice (its period's usage range, product, meter) and what was billed for it so far. */
export interface EarlierItemRow {
  subscription_id: string;
  invoice_id: string;
  period_start: string;
  period_end: string;
  usage_start: Date;
  usage_end: Date;
  product_id: string;
  product_name: string;
  meter_id: string;
  meter_type: MeterType;
  aggregation: string;
  unit: string;
  unique_by: string | null;
  billed_quantity: string;
  billed_amount: string;
  /** A pro-rated item's lines: the interval they cover (service_start/service_end) and their period's bounds. */
  service_start: Date | null;
  service_end: Date | null;
  period_start_at: Date;
  period_end_at: Date;
}

/**
 * The columns of an earlier invoice line's period and usage range, for both late-usage queries below: `i` the invoice, `s` the subscription, `line` the usage line (alias) whose interval counts.
 */
export function earlierRangeColumns(line: string): string {
  return `i.period_start::timestamp AT TIME ZONE 'UTC' AS period_start_at, (i.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS period_end_at,
            GREATEST(COALESCE(${line}.service_start, i.period_start::timestamp AT TIME ZONE 'UTC'), s.trial_end) AS usage_start,
            LEAST(COALESCE(${line}.service_end, (i.period_end + 1)::timestamp AT TIME ZONE 'UTC'), s.canceled_at) AS usage_end,
            ${line}.service_start, ${line}.service_end`;
}

/** An earlier invoice's usage line, with what was billed for its item so far (usage, true-up, adjustments). */
export interface BilledRow extends EarlierItemRow {
  price_model: PriceModel & { minimum_amount: string | null };
}

/** One group of an earlier invoice's grouped item, as billed so far. */
export interface BilledGroupRow extends EarlierItemRow {
  price_model: PriceSnapshot & { group_by: string[] };
  dimensions: LineDimensions;
}

/**
 * Usage lines (ungrouped) of the invoices before each period (void invoices, drafts and threshold invoices excepted),
 * with the usage range of their period and what was billed for the item so far.
 */
export async function earlierUsageLines(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  periodStarts: Date[],
  lookbackMonths: number,
): Promise<BilledRow[]> {
  const r = await q.query<BilledRow>(
    `SELECT i.subscription_id, i.id AS invoice_id, to_char(i.period_start, 'YYYY-MM-DD') AS period_start, to_char(i.period_end, 'YYYY-MM-DD') AS period_end,
            ${earlierRangeColumns('l')},
            l.product_id, p.name AS product_name, l.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by,
            COALESCE(l.price_model, jsonb_build_object('pricing', 'metered', 'price', l.unit_price::text, 'minimum_amount', NULL)) AS price_model,
            (l.quantity + COALESCE(adj.quantity, 0))::text AS billed_quantity,
            (l.amount + COALESCE(mc.amount, 0) + COALESCE(adj.amount, 0))::text AS billed_amount
       FROM unnest($1::text[], $2::timestamptz[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.status NOT IN ('void', 'draft') AND i.reason = 'period'
                      AND i.period_start < c.period_start AND i.period_start >= c.period_start - make_interval(months => $3)
       JOIN subscriptions s ON s.id = i.subscription_id
       JOIN invoice_lines l ON l.invoice_id = i.id AND l.type = 'usage' AND l.dimensions IS NULL
       JOIN products p ON p.id = l.product_id
       JOIN meters m ON m.id = l.meter_id
       LEFT JOIN LATERAL (SELECT sum(x.amount) AS amount FROM invoice_lines x
                           WHERE x.invoice_id = i.id AND x.type = 'minimum_commitment' AND x.product_id = l.product_id AND x.meter_id = l.meter_id
                             AND x.service_start IS NOT DISTINCT FROM l.service_start) mc ON true
       LEFT JOIN LATERAL (SELECT sum(x.quantity) AS quantity, sum(x.amount) AS amount FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
                           WHERE x.adjusts_invoice_id = i.id AND xi.status NOT IN ('void', 'draft') AND xi.reason = 'period' AND x.product_id = l.product_id AND x.meter_id = l.meter_id AND x.dimensions IS NULL
                             AND x.service_start IS NOT DISTINCT FROM l.service_start) adj ON true
      ORDER BY i.subscription_id, i.period_start, l.position`,
    [subscriptionIds, periodStarts, lookbackMonths],
  );
  return r.rows;
}

/** Groups of the grouped usage lines of the invoices before each period, with what each group was billed so far. */
export async function earlierGroupedLines(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  periodStarts: Date[],
  lookbackMonths: number,
): Promise<BilledGroupRow[]> {
  const r = await q.query<BilledGroupRow>(
    `SELECT i.subscription_id, i.id AS invoice_id, to_char(i.period_start, 'YYYY-MM-DD') AS period_start, to_char(i.period_end, 'YYYY-MM-DD') AS period_end,
            ${earlierRangeColumns('u')},
            u.product_id, p.name AS product_name, u.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by, u.price_model,
            g.dimensions, g.quantity::text AS billed_quantity, g.amount::text AS billed_amount
       FROM unnest($1::text[], $2::timestamptz[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.status NOT IN ('void', 'draft') AND i.reason = 'period'
                      AND i.period_start < c.period_start AND i.period_start >= c.period_start - make_interval(months => $3)
       JOIN subscriptions s ON s.id = i.subscription_id
       JOIN LATERAL (SELECT DISTINCT ON (l.product_id, l.meter_id, l.service_start) l.product_id, l.meter_id, l.price_model, l.position, l.service_start, l.service_end
                       FROM invoice_lines l
                      WHERE l.invoice_id = i.id AND l.type = 'usage' AND l.dimensions IS NOT NULL
                      ORDER BY l.product_id, l.meter_id, l.service_start, l.position) u ON true
       JOIN products p ON p.id = u.product_id
       JOIN meters m ON m.id = u.meter_id
       JOIN LATERAL (SELECT x.dimensions, sum(x.quantity) AS quantity, sum(x.amount) AS amount
                       FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
                      WHERE xi.status NOT IN ('void', 'draft') AND xi.reason = 'period' AND x.product_id = u.product_id AND x.meter_id = u.meter_id AND x.dimensions IS NOT NULL
                        AND x.service_start IS NOT DISTINCT FROM u.service_start
                        AND ((x.invoice_id = i.id AND x.type = 'usage') OR x.adjusts_invoice_id = i.id)
                      GROUP BY x.dimensions) g ON true
      ORDER BY i.subscription_id, i.period_start, u.position, g.dimensions::text`,
    [subscriptionIds, periodStarts, lookbackMonths],
  );
  return r.rows;
}
