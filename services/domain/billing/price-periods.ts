import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { MeterType } from '../../../shared/meters/record.js';
import { queryUsageTotals, type UsageTotals, type UsageTotalsRequest } from '../usage/query.js';
import {
  billedGroupsBefore,
  earlierRangeColumns,
  earlierService,
  groupAdjustments,
  groupsToPrice,
  type EarlierItemRow,
} from './group-adjustments.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import type { PriceModel, ProductPriceRow } from '../pricing/price-models.js';
import { productPriceIn, type ProductCurrencyOptions } from '../pricing/price-books.js';
import {
  priceInvoice,
  type AdjustmentToPrice,
  type InvoiceToPrice,
  type MeterUsage,
  type PricedInvoice,
} from '../pricing/invoice-lines.js';
import { serviceInterval } from '../pricing/proration.js';
import { billedGroupBy, type DimensionPrices } from '../pricing/dimension-prices.js';
import { applyDiscounts } from './discounts.js';

/** A subscription's period to price: usage counts from periodStart up to usageEndMs (exclusive). */
export interface PeriodToPrice {
  subscription_id: string;
  account_id: string;
  currency: string;
  startMs: number;
  /** The period's end (the start of the next one). */
  endMs: number;
  /** The period's end; a canceled subscription's cancellation instant if earlier; a threshold check's now. */
  usageEndMs: number;
  /**
   * An advance invoice (services/domain/billing/advance.ts): the flat items of a period longer than a month, billed at
   * its start. Otherwise such a subscription's periods priced are its usage months, which bill its usage-priced items only.
   */
  advance?: boolean;
}

/** SQL twin of billsUsageMonthly (services/domain/subscriptions/periods.ts): a period longer than a month. */
export const LONG_PERIOD = (s: string) =>
  `(${s}."interval" IN ('quarter', 'year') OR (${s}."interval" = 'month' AND ${s}.interval_count > 1))`;

export const PRODUCT_PRICE_COLUMNS = (p: string) =>
  `${p}.pricing, ${p}.price::text AS price, ${p}.tiers_mode, ${p}.tiers, ${p}.package_size::text AS package_size,
   ${p}.currency AS product_currency, ${p}.currency_options`;

interface ItemRow extends ProductPriceRow {
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

/** An earlier invoice's usage line, with what was billed for its item so far (usage, true-up, adjustments). */
interface BilledRow extends EarlierItemRow {
  price_model: PriceModel & { minimum_amount: string | null };
}

/** Subscriptions priced per piscina task: large enough to share the hand-off cost, small enough to spread. */
const INVOICES_PER_TASK = 250;

/**
 * How far back a close looks for invoiced periods whose usage changed (late records — accepted up to 35 days
 * back — and corrections): the invoices of the periods that began in the 3 months before the one being priced.
 * Months, not periods: the acceptance window is time (three weekly periods would miss a record 30 days late).
 */
export const LATE_USAGE_LOOKBACK_MONTHS = 3;

/**
 * The items of many subscriptions that were on during each one's period — current ones and those removed or
 * changed during it (services/domain/subscriptions/store.ts keeps the history) — in printed order, with
 * their product's name and price model and their meter.
 */
async function itemsOf(q: PgPool | PgClient, periods: PeriodToPrice[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(periods.map((p) => [p.subscription_id, []]));
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
    [
      periods.map((p) => p.subscription_id),
      periods.map((p) => new Date(p.startMs)),
      periods.map((p) => new Date(p.endMs)),
      periods.map((p) => p.advance === true),
    ],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push(row);
  for (const [id, rows] of out) out.set(id, oneLinePerNonAdditiveItem(rows));
  return out;
}

/** Aggregations whose value over a period is the sum of their values over its parts. */
const ADDITIVE = new Set(['count', 'sum']);

/**
 * THE rule of an item changed during a period on a meter that does not add up over time (max, min, last, avg,
 * unique_count, percentiles — docs/billing.md "Proration"): its versions that follow each other without a gap
 * (a change ends one at the instant the next begins) are billed as ONE usage line over the time they cover
 * together, priced with the last of them (the version in force at the period's end, or when the item was
 * removed) — its price model, minimum (pro-rated over that time when it is not the whole period) and group_by.
 * Split in parts, each part's peak, last value or unique users would be billed again: a max of 12.5 across a
 * change of the item's minimum billed 12.5 twice. Sums and counts keep one line per version (each priced at its
 * own rates over its own interval: their parts add up). Rows come in printed order; the merged line takes the
 * place of the chain's first version in print.
 */
export function oneLinePerNonAdditiveItem<
  T extends {
    product_id: string;
    meter_id: string | null;
    aggregation: string | null;
    effective_from: Date | null;
    effective_to: Date | null;
  },
>(rows: T[]): T[] {
  const from = (r: T) => r.effective_from?.getTime() ?? -Infinity;
  const byItem = new Map<string, number[]>();
  rows.forEach((row, i) => {
    if (!row.meter_id || ADDITIVE.has(row.aggregation ?? '')) return;
    const key = `${row.product_id} ${row.meter_id}`;
    byItem.set(key, [...(byItem.get(key) ?? []), i]);
  });
  const out: (T | null)[] = [...rows];
  for (const indexes of byItem.values()) {
    const chain = [...indexes].sort((a, b) => from(rows[a]!) - from(rows[b]!));
    let first = chain[0]!;
    for (const i of chain.slice(1)) {
      const prev = out[first]!;
      if (prev.effective_to === null || prev.effective_to.getTime() !== from(rows[i]!)) {
        first = i;
        continue;
      }
      // The later version, over the time of both, in the place of the earlier one in print.
      const at = Math.min(first, i);
      out[Math.max(first, i)] = null;
      out[at] = { ...rows[i]!, effective_from: prev.effective_from };
      first = at;
    }
  }
  return out.filter((r): r is T => r !== null);
}

/**
 * Usage lines of each subscription's invoices of the LATE_USAGE_LOOKBACK_MONTHS periods before `startMs`
 * (void invoices and drafts excepted: a draft is re-priced whole when it is finalized; threshold invoices too, and
 * adjustments on them: their period's final invoice bills the period whole and deducts them, services/domain/billing/thresholds.ts), with the usage range of their period and what was billed for the item so far.
 * Lines written before price models were snapshotted re-price at their own unit price.
 */
async function billedBefore(q: PgPool | PgClient, periods: PeriodToPrice[]): Promise<Map<string, BilledRow[]>> {
  const out = new Map<string, BilledRow[]>(periods.map((p) => [p.subscription_id, []]));
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
    [periods.map((p) => p.subscription_id), periods.map((p) => new Date(p.startMs)), LATE_USAGE_LOOKBACK_MONTHS],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push(row);
  return out;
}

/** A metered item's usage as the line maths take it: the total, and each group's for a grouped item. */
function meterUsage(it: ItemRow, usage: UsageTotals): MeterUsage {
  const { groups, ...total } = usage;
  const out: MeterUsage = { id: it.meter_id!, aggregation: it.aggregation!, unit: it.unit!, usage: total };
  const groupBy = billedGroupBy(it);
  if (groupBy.length) out.groups = groupsToPrice(groupBy, groups);
  return out;
}

/**
 * Prices many subscription periods: items and earlier invoices from Postgres (one query each), usage of every
 * metered item — this period's and the earlier periods' as they are now — from ClickHouse through the one usage
 * query (one query per distinct range and meter type), line maths in the piscina pool (many invoices per
 * task) — or inline without a pool: the upcoming invoice, a single one, is not worth a thread hop.
 */
export async function pricePeriods(
  deps: Pick<BillingDeps, 'clickhouse' | 'database'> & { linesPool?: BillingDeps['linesPool'] },
  q: PgPool | PgClient,
  periods: PeriodToPrice[],
  opts: { timings?: BillingTimings } = {},
): Promise<PricedInvoice[]> {
  if (periods.length === 0) return [];
  // One after another: `q` is the close's transaction client, and a pg client runs one query at a time (pg
  // queues concurrent ones with a DeprecationWarning; pg@9 refuses them).
  const [items, billed, billedGroups] = await timed(
    opts.timings,
    'postgres_ms',
    async () =>
      [
        await itemsOf(q, periods),
        await billedBefore(q, periods),
        await billedGroupsBefore(q, periods, LATE_USAGE_LOOKBACK_MONTHS),
      ] as const,
  );
  const requests: UsageTotalsRequest[] = [];
  const usageOf = (r: UsageTotalsRequest) => requests.push(r) - 1;
  // Per item row: the part of the period it was on (null: all of it) and, if metered, its usage request over that part.
  const itemService = periods.map((p) =>
    items.get(p.subscription_id)!.map((it) => serviceInterval(it.effective_from, it.effective_to, p.startMs, p.endMs)),
  );
  const itemUsage = periods.map((p, pi) =>
    items.get(p.subscription_id)!.map((it, ii) => {
      if (!it.meter_id) return -1;
      const service = itemService[pi]![ii];
      // Usage during a trial is not billed (the first period may begin before the trial's end).
      const startMs = Math.max(service?.fromMs ?? p.startMs, it.trial_end?.getTime() ?? -Infinity);
      const endMs = Math.max(startMs, Math.min(p.usageEndMs, service?.toMs ?? p.endMs));
      return usageOf({
        accountId: p.account_id,
        meterId: it.meter_id,
        type: it.meter_type!,
        startMs,
        endMs,
        uniqueBy: it.unique_by ?? undefined,
        groupBy: billedGroupBy(it).length ? billedGroupBy(it) : undefined,
      });
    }),
  );
  const billedUsage = periods.map((p) =>
    billed.get(p.subscription_id)!.map((b) =>
      usageOf({
        accountId: p.account_id,
        meterId: b.meter_id,
        type: b.meter_type,
        startMs: b.usage_start.getTime(),
        endMs: b.usage_end.getTime(),
        uniqueBy: b.unique_by ?? undefined,
      }),
    ),
  );
  const billedGroupUsage = periods.map((p) => billedGroups.get(p.subscription_id)!.map((g) => usageOf(g.request)));
  const usage = requests.length
    ? await timed(opts.timings, 'clickhouse_ms', () => queryUsageTotals(deps.clickhouse, deps.database, requests))
    : [];
  const toPrice: InvoiceToPrice[] = periods.map((p, pi) => ({
    subscription_id: p.subscription_id,
    currency: p.currency,
    items: items.get(p.subscription_id)!.map((it, ii) => ({
      product_id: it.product_id,
      product_name: it.product_name,
      model: itemPriceIn(it, p.currency),
      minimum_amount: it.minimum_amount,
      quantity: it.quantity,
      service: itemService[pi]![ii],
      meter: it.meter_id ? meterUsage(it, usage[itemUsage[pi]![ii]!]!) : null,
      ...(it.group_by.length ? { group_by: it.group_by } : {}),
      ...(it.dimension_prices ? { dimension_prices: it.dimension_prices } : {}),
    })),
    // An advance invoice bills flat items only: late usage goes to the usage months' invoices.
    adjustments: (p.advance ? [] : billed.get(p.subscription_id)!)
      .map((b, bi): AdjustmentToPrice => {
        const { minimum_amount, ...model } = b.price_model;
        return {
          invoice_id: b.invoice_id,
          period_start: b.period_start,
          period_end: b.period_end,
          product_id: b.product_id,
          product_name: b.product_name,
          model: model as PriceModel,
          minimum_amount,
          service: earlierService(b),
          meter: { id: b.meter_id, aggregation: b.aggregation, unit: b.unit, usage: usage[billedUsage[pi]![bi]!]! },
          billed_quantity: b.billed_quantity,
          billed_amount: b.billed_amount,
        };
      })
      .concat(
        (p.advance ? [] : billedGroups.get(p.subscription_id)!).flatMap((g, gi) =>
          groupAdjustments(g, usage[billedGroupUsage[pi]![gi]!]!.groups),
        ),
      ),
  }));
  const pool = deps.linesPool;
  const priced = pool
    ? await timed(opts.timings, 'piscina_ms', async () => {
        const tasks: Promise<PricedInvoice[]>[] = [];
        for (let i = 0; i < toPrice.length; i += INVOICES_PER_TASK) {
          tasks.push(pool.run({ invoices: toPrice.slice(i, i + INVOICES_PER_TASK) }));
        }
        return (await Promise.all(tasks)).flat();
      })
    : toPrice.map(priceInvoice);
  // Coupons: every pricing of a period is discounted by the one rule, before deductions, tax and credit.
  await timed(opts.timings, 'postgres_ms', () => applyDiscounts(q, periods, priced));
  return priced;
}

/**
 * An item's product price in the subscription's currency (price books). Subscribing checked the product has one
 * (subscriptions/items.ts) and a price book is never removed, so none is a broken invariant: the close stops.
 */
function itemPriceIn(it: ItemRow, currency: string): PriceModel {
  const model = productPriceIn({ ...it, currency: it.product_currency }, currency);
  if (!model)
    throw new Error(`product ${it.product_id} has no price in ${currency} (subscription ${it.subscription_id})`);
  return model;
}
