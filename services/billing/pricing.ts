import type { PgClient, PgPool } from '../../shared/clients/postgres.js';
import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../shared/money/decimal.js';
import type { MeterType } from '../../shared/meters/record.js';
import { queryUsageTotals, type UsageTotals, type UsageTotalsRequest } from '../../shared/usage/query.js';
import { billedGroupsBefore, groupAdjustments, groupsToPrice, type EarlierItemRow } from './group-adjustments.js';
import { runPooled } from '../workers/pool.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import type { PriceModel, Pricing, Tier, TiersMode } from './price-models.js';
import { priceInvoice, type AdjustmentToPrice, type InvoiceToPrice, type MeterUsage, type PricedInvoice } from './invoice-lines.js';

/** A subscription's period to price: usage counts from periodStart up to usageEndMs (exclusive). */
export interface PeriodToPrice {
  subscription_id: string;
  account_id: string;
  currency: string;
  startMs: number;
  /** The period's end; a canceled subscription's cancellation instant if earlier; now for the upcoming invoice. */
  usageEndMs: number;
}

/** A product's price columns (products table), as every reader selects them. */
export interface ProductPriceRow {
  pricing: Pricing;
  price: string;
  tiers_mode: TiersMode | null;
  tiers: Tier[] | null;
  package_size: string | null;
}

export const PRODUCT_PRICE_COLUMNS = (p: string) =>
  `${p}.pricing, ${p}.price::text AS price, ${p}.tiers_mode, ${p}.tiers, ${p}.package_size::text AS package_size`;

/** The price model a product row describes. */
export function priceModelOf(row: ProductPriceRow): PriceModel {
  if (row.pricing === 'tiered') return { pricing: 'tiered', tiers_mode: row.tiers_mode!, tiers: row.tiers! };
  if (row.pricing === 'package') return { pricing: 'package', price: row.price, package_size: row.package_size! };
  return { pricing: row.pricing, price: row.price };
}

interface ItemRow extends ProductPriceRow {
  subscription_id: string;
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
}

/** An earlier invoice's usage line, with what was billed for its item so far (usage, true-up, adjustments). */
interface BilledRow extends EarlierItemRow {
  price_model: PriceModel & { minimum_amount: string | null };
}

/** Subscriptions priced per piscina task: large enough to share the hand-off cost, small enough to spread. */
const INVOICES_PER_TASK = 250;

/**
 * How far back a close looks for invoiced periods whose usage changed (late records — accepted up to 35 days
 * back — and corrections): the invoices of the three periods before the one being priced.
 */
export const LATE_USAGE_LOOKBACK_MONTHS = 3;

/** Items of many subscriptions in printed order, with their product's name and price model and their meter. */
async function itemsOf(q: PgPool | PgClient, subscriptionIds: string[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(subscriptionIds.map((id) => [id, []]));
  const r = await q.query<ItemRow>(
    `SELECT si.subscription_id, si.product_id, p.name AS product_name, ${PRODUCT_PRICE_COLUMNS('p')}, si.minimum_amount::text AS minimum_amount,
            si.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by, si.group_by
       FROM subscription_items si JOIN products p ON p.id = si.product_id LEFT JOIN meters m ON m.id = si.meter_id
      WHERE si.subscription_id = ANY($1) ORDER BY si.subscription_id, si.position`,
    [subscriptionIds],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push(row);
  return out;
}

/**
 * Usage lines of each subscription's invoices of the LATE_USAGE_LOOKBACK_MONTHS periods before `startMs`
 * (void invoices excepted), with the usage range of their period and what was billed for the item so far.
 * Lines written before price models were snapshotted re-price at their own unit price.
 */
async function billedBefore(q: PgPool | PgClient, periods: PeriodToPrice[]): Promise<Map<string, BilledRow[]>> {
  const out = new Map<string, BilledRow[]>(periods.map((p) => [p.subscription_id, []]));
  const r = await q.query<BilledRow>(
    `SELECT i.subscription_id, i.id AS invoice_id, to_char(i.period_start, 'YYYY-MM-DD') AS period_start, to_char(i.period_end, 'YYYY-MM-DD') AS period_end,
            i.period_start::timestamp AT TIME ZONE 'UTC' AS usage_start,
            LEAST((i.period_end + 1)::timestamp AT TIME ZONE 'UTC', s.canceled_at) AS usage_end,
            l.product_id, p.name AS product_name, l.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by,
            COALESCE(l.price_model, jsonb_build_object('pricing', 'metered', 'price', l.unit_price::text, 'minimum_amount', NULL)) AS price_model,
            (l.quantity + COALESCE(adj.quantity, 0))::text AS billed_quantity,
            (l.amount + COALESCE(mc.amount, 0) + COALESCE(adj.amount, 0))::text AS billed_amount
       FROM unnest($1::text[], $2::timestamptz[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.status <> 'void'
                      AND i.period_start < c.period_start AND i.period_start >= c.period_start - make_interval(months => $3)
       JOIN subscriptions s ON s.id = i.subscription_id
       JOIN invoice_lines l ON l.invoice_id = i.id AND l.type = 'usage' AND l.dimensions IS NULL
       JOIN products p ON p.id = l.product_id
       JOIN meters m ON m.id = l.meter_id
       LEFT JOIN LATERAL (SELECT sum(x.amount) AS amount FROM invoice_lines x
                           WHERE x.invoice_id = i.id AND x.type = 'minimum_commitment' AND x.product_id = l.product_id AND x.meter_id = l.meter_id) mc ON true
       LEFT JOIN LATERAL (SELECT sum(x.quantity) AS quantity, sum(x.amount) AS amount FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
                           WHERE x.adjusts_invoice_id = i.id AND xi.status <> 'void' AND x.product_id = l.product_id AND x.meter_id = l.meter_id AND x.dimensions IS NULL) adj ON true
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
  if (it.group_by.length) out.groups = groupsToPrice(it.group_by, groups);
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
  const ids = periods.map((p) => p.subscription_id);
  const [items, billed, billedGroups] = await timed(opts.timings, 'postgres_ms', () =>
    Promise.all([itemsOf(q, ids), billedBefore(q, periods), billedGroupsBefore(q, periods, LATE_USAGE_LOOKBACK_MONTHS)]),
  );
  const requests: UsageTotalsRequest[] = [];
  const usageOf = (r: UsageTotalsRequest) => requests.push(r) - 1;
  const itemUsage = new Map<string, number>();
  for (const p of periods) {
    for (const it of items.get(p.subscription_id)!) {
      if (!it.meter_id) continue;
      itemUsage.set(`${p.subscription_id}:${it.meter_id}`, usageOf({ accountId: p.account_id, meterId: it.meter_id, type: it.meter_type!, startMs: p.startMs, endMs: p.usageEndMs, uniqueBy: it.unique_by ?? undefined, groupBy: it.group_by.length ? it.group_by : undefined }));
    }
  }
  const billedUsage = periods.map((p) =>
    billed.get(p.subscription_id)!.map((b) => usageOf({ accountId: p.account_id, meterId: b.meter_id, type: b.meter_type, startMs: b.usage_start.getTime(), endMs: b.usage_end.getTime(), uniqueBy: b.unique_by ?? undefined })),
  );
  const billedGroupUsage = periods.map((p) => billedGroups.get(p.subscription_id)!.map((g) => usageOf(g.request)));
  const usage = requests.length ? await timed(opts.timings, 'clickhouse_ms', () => queryUsageTotals(deps.clickhouse, deps.database, requests)) : [];
  const toPrice: InvoiceToPrice[] = periods.map((p, pi) => ({
    subscription_id: p.subscription_id,
    currency: p.currency,
    items: items.get(p.subscription_id)!.map((it) => ({
      product_id: it.product_id,
      product_name: it.product_name,
      model: priceModelOf(it),
      minimum_amount: it.minimum_amount,
      meter: it.meter_id ? meterUsage(it, usage[itemUsage.get(`${p.subscription_id}:${it.meter_id}`)!]!) : null,
      ...(it.group_by.length ? { group_by: it.group_by } : {}),
    })),
    adjustments: billed.get(p.subscription_id)!.map((b, bi): AdjustmentToPrice => {
      const { minimum_amount, ...model } = b.price_model;
      return {
        invoice_id: b.invoice_id,
        period_start: b.period_start,
        period_end: b.period_end,
        product_id: b.product_id,
        product_name: b.product_name,
        model: model as PriceModel,
        minimum_amount,
        meter: { id: b.meter_id, aggregation: b.aggregation, unit: b.unit, usage: usage[billedUsage[pi]![bi]!]! },
        billed_quantity: b.billed_quantity,
        billed_amount: b.billed_amount,
      };
    }).concat(billedGroups.get(p.subscription_id)!.flatMap((g, gi) => groupAdjustments(g, usage[billedGroupUsage[pi]![gi]!]!.groups))),
  }));
  const pool = deps.linesPool;
  if (!pool) return toPrice.map(priceInvoice);
  return timed(opts.timings, 'piscina_ms', async () => {
    const tasks: Promise<PricedInvoice[]>[] = [];
    for (let i = 0; i < toPrice.length; i += INVOICES_PER_TASK) {
      tasks.push(runPooled(pool, { invoices: toPrice.slice(i, i + INVOICES_PER_TASK) }, 'invoice maths'));
    }
    return (await Promise.all(tasks)).flat();
  });
}
