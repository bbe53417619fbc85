import type { PgClient, PgPool } from '../../shared/clients/postgres.js';
import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../shared/money/decimal.js';
import type { MeterType } from '../../shared/meters/record.js';
import { queryUsageTotals, type UsageTotalsRequest } from '../../shared/usage/query.js';
import { runPooled } from '../workers/pool.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { groupDigits, priceInvoice, type AdjustmentToPrice, type InvoiceToPrice, type PricedInvoice } from './invoice-lines.js';

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
}

/** An earlier invoice's usage line, with what was billed for its item so far (usage, true-up, adjustments). */
interface BilledRow {
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
  price_model: PriceModel & { minimum_amount: string | null };
  billed_quantity: string;
  billed_amount: string;
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
            si.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by
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
       JOIN invoice_lines l ON l.invoice_id = i.id AND l.type = 'usage'
       JOIN products p ON p.id = l.product_id
       JOIN meters m ON m.id = l.meter_id
       LEFT JOIN LATERAL (SELECT sum(x.amount) AS amount FROM invoice_lines x
                           WHERE x.invoice_id = i.id AND x.type = 'minimum_commitment' AND x.product_id = l.product_id AND x.meter_id = l.meter_id) mc ON true
       LEFT JOIN LATERAL (SELECT sum(x.quantity) AS quantity, sum(x.amount) AS amount FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
                           WHERE x.adjusts_invoice_id = i.id AND xi.status <> 'void' AND x.product_id = l.product_id AND x.meter_id = l.meter_id) adj ON true
      ORDER BY i.subscription_id, i.period_start, l.position`,
    [periods.map((p) => p.subscription_id), periods.map((p) => new Date(p.startMs)), LATE_USAGE_LOOKBACK_MONTHS],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push(row);
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
  const [items, billed] = await timed(opts.timings, 'postgres_ms', () => Promise.all([itemsOf(q, ids), billedBefore(q, periods)]));
  const requests: UsageTotalsRequest[] = [];
  const usageOf = (r: UsageTotalsRequest) => requests.push(r) - 1;
  const itemUsage = new Map<string, number>();
  for (const p of periods) {
    for (const it of items.get(p.subscription_id)!) {
      if (!it.meter_id) continue;
      itemUsage.set(`${p.subscription_id}:${it.meter_id}`, usageOf({ accountId: p.account_id, meterId: it.meter_id, type: it.meter_type!, startMs: p.startMs, endMs: p.usageEndMs, uniqueBy: it.unique_by ?? undefined }));
    }
  }
  const billedUsage = periods.map((p) =>
    billed.get(p.subscription_id)!.map((b) => usageOf({ accountId: p.account_id, meterId: b.meter_id, type: b.meter_type, startMs: b.usage_start.getTime(), endMs: b.usage_end.getTime(), uniqueBy: b.unique_by ?? undefined })),
  );
  const usage = requests.length ? await timed(opts.timings, 'clickhouse_ms', () => queryUsageTotals(deps.clickhouse, deps.database, requests)) : [];
  const toPrice: InvoiceToPrice[] = periods.map((p, pi) => ({
    subscription_id: p.subscription_id,
    currency: p.currency,
    items: items.get(p.subscription_id)!.map((it) => ({
      product_id: it.product_id,
      product_name: it.product_name,
      model: priceModelOf(it),
      minimum_amount: it.minimum_amount,
      meter: it.meter_id ? { id: it.meter_id, aggregation: it.aggregation!, unit: it.unit!, usage: usage[itemUsage.get(`${p.subscription_id}:${it.meter_id}`)!]! } : null,
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
    }),
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

/* ---------------------------------------------------------------------------------------------------------
 * Price models (docs/design.md §8 Product): THE maths of each pricing rule, pure functions of plain data so
 * the billing run (piscina worker), the upcoming invoice, late-usage adjustments and per-group lines all
 * price the same way. Amounts are exact until one final rounding, half away from zero, to the minor unit.
 * ------------------------------------------------------------------------------------------------------- */

export const PRICINGS = ['flat', 'metered', 'tiered', 'package'] as const;
export type Pricing = (typeof PRICINGS)[number];
export const TIERS_MODES = ['graduated', 'volume'] as const;
export type TiersMode = (typeof TIERS_MODES)[number];

/** One tier; exact decimal strings. `up_to` null: unbounded (the last tier). */
export interface Tier {
  up_to: string | null;
  unit_price: string;
  flat_price: string;
}

/** A product's price model as stored on the product and snapshotted on each usage line it priced. */
export type PriceModel =
  | { pricing: 'flat' | 'metered'; price: string }
  | { pricing: 'package'; price: string; package_size: string }
  | { pricing: 'tiered'; tiers_mode: TiersMode; tiers: Tier[] };

export interface PricedQuantity {
  /** Rounded to the currency's minor unit. */
  amount: Decimal;
  /** The price the line shows per unit: the unit price, the package price, or the (last reached) tier's. */
  unit_price: Decimal;
  /** How the amount was reached, for the line's description: "" for a plain unit price. */
  breakdown: string;
}

const ZERO = new Decimal(0);

/**
 * Prices `quantity` units under `model`. A negative or zero quantity (a gauge can report one) reaches no
 * tier and no package: tiered and package models price it 0; flat and metered multiply as before.
 * - metered: quantity × price.
 * - package: ⌈quantity / package_size⌉ packages × price.
 * - graduated tiers: each unit at the price of the tier it falls in; a reached tier adds its flat_price once.
 * - volume tiers: every unit at the price of the tier the total falls in (up_to inclusive), plus its flat_price.
 */
export function priceQuantity(model: PriceModel, quantity: Decimal, currency: string): PricedQuantity {
  const round = (d: Decimal) => roundToMinorUnit(d, currency);
  switch (model.pricing) {
    case 'flat':
    case 'metered':
      return { amount: round(quantity.times(model.price)), unit_price: new Decimal(model.price), breakdown: '' };
    case 'package': {
      const packages = quantity.lte(0) ? ZERO : quantity.div(model.package_size).ceil();
      return {
        amount: round(packages.times(model.price)),
        unit_price: new Decimal(model.price),
        breakdown: `${groupDigits(packages)} × package of ${groupDigits(new Decimal(model.package_size))} at ${canonicalDecimal(model.price)}`,
      };
    }
    case 'tiered':
      return model.tiers_mode === 'graduated' ? priceGraduated(model.tiers, quantity, round) : priceVolume(model.tiers, quantity, round);
  }
}

function tierPart(units: Decimal, t: Tier): { amount: Decimal; text: string } {
  const flat = new Decimal(t.flat_price);
  const text = `${groupDigits(units)} × ${canonicalDecimal(t.unit_price)}` + (flat.isZero() ? '' : ` + ${canonicalDecimal(flat)} flat`);
  return { amount: units.times(t.unit_price).plus(flat), text };
}

function priceGraduated(tiers: Tier[], quantity: Decimal, round: (d: Decimal) => Decimal): PricedQuantity {
  let total = ZERO;
  let below = ZERO;
  let unitPrice = new Decimal(tiers[0]!.unit_price);
  const parts: string[] = [];
  for (const t of tiers) {
    if (quantity.lte(below)) break;
    const top = t.up_to === null ? quantity : Decimal.min(quantity, t.up_to);
    const part = tierPart(top.minus(below), t);
    total = total.plus(part.amount);
    parts.push(part.text);
    unitPrice = new Decimal(t.unit_price);
    if (t.up_to === null) break;
    below = new Decimal(t.up_to);
  }
  return { amount: round(total), unit_price: unitPrice, breakdown: parts.length ? `graduated: ${parts.join(' + ')}` : 'graduated: no tier reached' };
}

function priceVolume(tiers: Tier[], quantity: Decimal, round: (d: Decimal) => Decimal): PricedQuantity {
  if (quantity.lte(0)) return { amount: ZERO, unit_price: new Decimal(tiers[0]!.unit_price), breakdown: 'volume: no tier reached' };
  const i = tiers.findIndex((t) => t.up_to === null || quantity.lte(t.up_to));
  const t = tiers[i]!;
  const part = tierPart(quantity, t);
  const range = t.up_to === null ? `above ${groupDigits(new Decimal(tiers[i - 1]?.up_to ?? 0))}` : `up to ${groupDigits(new Decimal(t.up_to))}`;
  return { amount: round(part.amount), unit_price: new Decimal(t.unit_price), breakdown: `volume (tier ${i + 1}, ${range}): ${part.text}` };
}

/** Minimum commitment: what tops an item's priced usage up to its per-period minimum (0 when reached). */
export function minimumTrueUp(usageAmount: Decimal, minimum: string | null, currency: string): Decimal {
  if (minimum === null) return ZERO;
  const short = roundToMinorUnit(minimum, currency).minus(usageAmount);
  return short.gt(0) ? short : ZERO;
}
