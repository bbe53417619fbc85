import { Decimal, canonicalDecimal, formatGrouped, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { usageQuantity } from '../usage/aggregate.js';
import type { WindowStats } from '../usage/stats.js';
import { minimumTrueUp, priceQuantity, type PriceModel } from './price-models.js';
import { UNPRICED, priceForValue, type DimensionPrices } from './dimension-prices.js';
import { prorated, proratedAmount, prorationText, type ServiceInterval } from './proration.js';
import type { LineType } from '../../../shared/vocabulary.js';

/**
 * Invoice line maths (docs/design.md §8 Invoice), a pure function of plain data so it runs the same in the piscina
 * worker (services/workers/invoice-lines.ts, the billing run) and inline (the upcoming invoice):
 * - a flat item is one `flat` line, quantity 1 × its product's price;
 * - a metered, tiered or package item is one `usage` line: its quantity is its meter's aggregation over the
 *   period (services/domain/usage/aggregate.ts, the usageQuantity, the rule GET …/usage?window=none reports; no usage
 *   is quantity 0) priced by the product's price model (services/domain/billing/price-periods.ts priceQuantity), whose
 *   breakdown the description shows; an item with a minimum commitment that its usage falls short of gets a
 *   `minimum_commitment` line for the difference;
 * - usage of an earlier, already invoiced period that changed since (late records, corrections) is one
 *   `adjustment` line per item: that period re-priced at its own rates minus everything billed for it so far;
 * - every amount is rounded half away from zero to the currency's minor unit; the invoice amount is the
 *   exact sum of the lines (prepaid credit is applied after, by the period close: services/domain/billing/credits.ts).
 * Money is decimal.js throughout and crosses thread boundaries as canonical decimal strings.
 */
export interface MeterUsage {
  id: string;
  aggregation: string;
  unit: string;
  usage: WindowStats;
  /** Billing per group (an item's group_by): the usage of each group of dimension values, sorted. */
  groups?: GroupToPrice[];
}

/** A group's dimension values by key: null = records without that dimension. */
export type LineDimensions = Record<string, string | null>;

export interface GroupToPrice {
  dimensions: LineDimensions;
  usage: WindowStats;
}

export interface ItemToPrice {
  product_id: string;
  product_name: string;
  model: PriceModel;
  /** Minimum commitment per period (decimal string), or null. */
  minimum_amount: string | null;
  /** Metered items: the meter, its aggregation and unit, and its usage over the billed range. */
  meter: MeterUsage | null;
  /** Dimension keys the usage is billed by (one line per group); absent or empty: one line. */
  group_by?: string[];
  /** Per-dimension prices (services/domain/pricing/dimension-prices.ts): one line per value, each at its own model. */
  dimension_prices?: DimensionPrices | null;
  /** Flat items: units (seats); 1 otherwise. */
  quantity?: number;
  /** The part of the period the item was on when not all of it (services/domain/pricing/proration.ts); usage was counted over it. */
  service?: ServiceInterval | null;
}

/** An item of an earlier invoice, with that period's usage as it is now and what was billed for it so far. */
export interface AdjustmentToPrice extends Omit<ItemToPrice, 'meter'> {
  meter: MeterUsage;
  invoice_id: string;
  period_start: string;
  period_end: string;
  billed_quantity: string;
  billed_amount: string;
  /** Grouped items: the group re-priced (every group of the period apart), or null. */
  dimensions?: LineDimensions | null;
}

export interface InvoiceToPrice {
  subscription_id: string;
  currency: string;
  items: ItemToPrice[];
  adjustments?: AdjustmentToPrice[];
}

/** Many invoices priced at once: one piscina task of the billing run (services/workers/invoice-lines.ts). */
export interface InvoiceLinesTask {
  invoices: InvoiceToPrice[];
}

export interface PricedLine {
  type: LineType;
  product_id: string | null;
  meter_id: string | null;
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
  /** usage lines: the model (and minimum, group keys, per-dimension prices) they were priced with, kept to re-price late usage at these rates. */
  price_model: PriceSnapshot | null;
  /** adjustment lines: the earlier invoice whose period the usage belongs to. */
  adjusts_invoice_id: string | null;
  /** usage and adjustment lines of a grouped item: the group they bill; null otherwise. */
  dimensions?: LineDimensions | null;
  /** A pro-rated item's lines (and their adjustments): the interval they cover, [fromMs, toMs) of usage counted. */
  service?: { fromMs: number; toMs: number };
  /** Taxed lines: their tax at each rate, on their amount after the discounts attached to them (services/domain/billing/invoice-amounts.ts). */
  taxes?: LineTax[] | null;
  /** Tax lines: the rate, and the tax at it (amount is what the line adds: 0 for an inclusive rate). */
  tax_rate_id?: string | null;
  tax_amount?: string | null;
  /** Discount lines: the coupon (services/domain/billing/discounts.ts). */
  coupon_id?: string | null;
}

/** What a usage line keeps of how it was priced: its model, and for a grouped item the keys and per-dimension prices. */
export type PriceSnapshot = PriceModel & {
  minimum_amount: string | null;
  group_by?: string[];
  dimension_prices?: DimensionPrices;
};

export interface LineTax {
  tax_rate_id: string;
  amount: string;
  /**
   * The amount taxed at this rate when it is not the line's amount: a discounted line's amount after its discounts
   * (services/domain/billing/invoice-amounts.ts); a deduction line's (progressive billing) part taxed at the rate.
   */
  base?: string;
}

export interface PricedInvoice {
  subscription_id: string;
  currency: string;
  amount: string;
  lines: PricedLine[];
}

const line = (
  l: Partial<PricedLine> & Pick<PricedLine, 'type' | 'description' | 'quantity' | 'unit_price' | 'amount'>,
): PricedLine => ({
  product_id: null,
  meter_id: null,
  price_model: null,
  adjusts_invoice_id: null,
  ...l,
});

/** "12,500 requests (graduated: 1,000 × 0 + …)". */
function quantityDescription(meter: MeterUsage, quantity: Decimal, breakdown: string): string {
  return `${groupDigits(quantity)} ${meter.unit}` + (breakdown ? ` (${breakdown})` : '');
}

/** The minimum commitment that applies: pro-rated when the item was on for part of the period. */
function minimumOf(item: Pick<ItemToPrice, 'minimum_amount' | 'service'>): string | null {
  return item.minimum_amount === null || !item.service
    ? item.minimum_amount
    : canonicalDecimal(prorated(item.minimum_amount, item.service));
}

/** An item's priced usage plus its minimum-commitment true-up: what the item costs for a period. */
function priceItemUsage(item: ItemToPrice & { meter: MeterUsage }, currency: string) {
  const quantity = usageQuantity(item.meter.usage, item.meter.aggregation);
  const priced = priceQuantity(item.model, quantity, currency);
  const trueUp = minimumTrueUp(priced.amount, minimumOf(item), currency);
  return { quantity, priced, trueUp, total: priced.amount.plus(trueUp) };
}

function itemLines(item: ItemToPrice, currency: string): PricedLine[] {
  const service = item.service ? { fromMs: item.service.fromMs, toMs: item.service.toMs } : undefined;
  const proration = item.service ? ` — ${prorationText(item.service)}` : '';
  if (item.meter && item.dimension_prices)
    return groupLines(
      item as ItemToPrice & { meter: MeterUsage },
      [item.dimension_prices.dimension],
      currency,
      service,
      proration,
    );
  if (item.meter && item.group_by?.length)
    return groupLines(item as ItemToPrice & { meter: MeterUsage }, item.group_by, currency, service, proration);
  if (!item.meter) {
    const units = new Decimal(item.quantity ?? 1);
    const priced = priceQuantity(item.model, units, currency);
    const amount = item.service
      ? proratedAmount(units.times(priced.unit_price), item.service, currency)
      : priced.amount;
    const name = units.eq(1) ? item.product_name : `${item.product_name} × ${units}`;
    return [
      line({
        type: 'flat',
        product_id: item.product_id,
        description: `${name}${proration}`,
        quantity: canonicalDecimal(units),
        unit_price: canonicalDecimal(priced.unit_price),
        amount: canonicalDecimal(amount),
        service,
      }),
    ];
  }
  const withMeter = item as ItemToPrice & { meter: MeterUsage };
  const { quantity, priced, trueUp } = priceItemUsage(withMeter, currency);
  const lines = [
    line({
      type: 'usage',
      product_id: item.product_id,
      meter_id: item.meter.id,
      service,
      description: `${item.product_name} — ${quantityDescription(item.meter, quantity, priced.breakdown)}${proration}`,
      quantity: canonicalDecimal(quantity),
      unit_price: canonicalDecimal(priced.unit_price),
      amount: canonicalDecimal(priced.amount),
      price_model: { ...item.model, minimum_amount: item.minimum_amount },
    }),
  ];
  if (trueUp.gt(0)) {
    lines.push(
      line({
        type: 'minimum_commitment',
        product_id: item.product_id,
        meter_id: item.meter.id,
        service,
        description: `${item.product_name} — minimum commitment ${canonicalDecimal(item.minimum_amount!)}${item.service ? ` ${prorationText(item.service)}: ${canonicalDecimal(roundToMinorUnit(minimumOf(item)!, currency))}` : ''}, usage ${canonicalDecimal(priced.amount)}: true-up`,
        quantity: '1',
        unit_price: canonicalDecimal(trueUp),
        amount: canonicalDecimal(trueUp),
      }),
    );
  }
  return lines;
}

/** The adjustment line of an earlier period's item, or null when what was billed is still right. */
function adjustmentLine(a: AdjustmentToPrice, currency: string): PricedLine | null {
  const { quantity, priced, total } = priceItemUsage(a, currency);
  const dQuantity = quantity.minus(a.billed_quantity);
  const dAmount = total.minus(a.billed_amount);
  if (dQuantity.isZero() && dAmount.isZero()) return null;
  const sign = dQuantity.gte(0) ? '+' : '';
  return line({
    type: 'adjustment',
    product_id: a.product_id,
    meter_id: a.meter.id,
    description:
      `Usage adjustment for ${a.period_start} to ${a.period_end} (invoice ${a.invoice_id}): ${a.product_name}${a.dimensions ? ` — ${groupLabel(a.dimensions)}` : ''} — ${sign}${groupDigits(dQuantity)} ${a.meter.unit}, ` +
      `now ${quantityDescription(a.meter, quantity, priced.breakdown)}; billed before ${canonicalDecimal(a.billed_amount)}`,
    quantity: canonicalDecimal(dQuantity),
    unit_price: canonicalDecimal(priced.unit_price),
    amount: canonicalDecimal(dAmount),
    adjusts_invoice_id: a.invoice_id,
    service: a.service ? { fromMs: a.service.fromMs, toMs: a.service.toMs } : undefined,
    ...(a.dimensions ? { dimensions: a.dimensions } : {}),
  });
}

/** "model gpt-x, region (none)": a group as an invoice line names it. */
export function groupLabel(dimensions: LineDimensions): string {
  return Object.entries(dimensions)
    .map(([k, v]) => `${k} ${v ?? '(none)'}`)
    .join(', ');
}

/**
 * A grouped item's usage lines (issue 18): one per group of dimension values, each priced on its own — tiers and
 * packages count per group, not on the item's total — by the product's model, or with per-dimension prices
 * (issue 46) by its value's model (priceForValue; an unpriced value's line says so, at 0). No usage at all is one
 * line of quantity 0 for the all-absent group (so a late group re-prices against it like any other).
 * The snapshot carries group_by (and the per-dimension prices), so late usage of the period is re-priced per
 * group the same way.
 */
function groupLines(
  item: ItemToPrice & { meter: MeterUsage },
  groupBy: string[],
  currency: string,
  service: PricedLine['service'],
  proration: string,
): PricedLine[] {
  const groups = item.meter.groups?.length
    ? item.meter.groups
    : [{ dimensions: Object.fromEntries(groupBy.map((k) => [k, null])), usage: item.meter.usage }];
  const labelled = !!item.meter.groups?.length;
  const dp = item.dimension_prices ?? undefined;
  return groups.map((g) => {
    const model = dp ? priceForValue(dp, g.dimensions[dp.dimension] ?? null) : item.model;
    const { quantity, priced } = priceItemUsage(
      { ...item, model: model ?? UNPRICED, minimum_amount: null, meter: { ...item.meter, usage: g.usage } },
      currency,
    );
    const label = labelled || dp ? `${groupLabel(g.dimensions)} — ` : '';
    const unpriced = model === null ? ' — unpriced (no price for this value)' : '';
    return line({
      type: 'usage',
      product_id: item.product_id,
      meter_id: item.meter.id,
      service,
      description: `${item.product_name} — ${label}${quantityDescription(item.meter, quantity, priced.breakdown)}${unpriced}${proration}`,
      quantity: canonicalDecimal(quantity),
      unit_price: canonicalDecimal(priced.unit_price),
      amount: canonicalDecimal(priced.amount),
      price_model: {
        ...(model ?? UNPRICED),
        minimum_amount: null,
        group_by: groupBy,
        ...(dp ? { dimension_prices: dp } : {}),
      },
      dimensions: g.dimensions,
    });
  });
}

export function priceInvoice(inv: InvoiceToPrice): PricedInvoice {
  const lines = inv.items.flatMap((item) => itemLines(item, inv.currency));
  for (const a of inv.adjustments ?? []) {
    const l = adjustmentLine(a, inv.currency);
    if (l) lines.push(l);
  }
  return {
    subscription_id: inv.subscription_id,
    currency: inv.currency,
    amount: canonicalDecimal(sumOfLines(lines)),
    lines,
  };
}

/** amount = Σ lines, exactly: the one place an invoice's total is computed. */
export function sumOfLines(lines: readonly { amount: string }[]): Decimal {
  return lines.reduce((s, l) => s.plus(l.amount), new Decimal(0));
}

/** "1234567.5" → "1,234,567.5": quantities as people read them on an invoice. */
export function groupDigits(d: Decimal): string {
  return formatGrouped(d);
}
