import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../shared/money/decimal.js';
import { usageQuantity } from '../../shared/usage/aggregate.js';
import type { WindowStats } from '../../shared/usage/stats.js';

/**
 * Invoice line maths (docs/design.md §8 Invoice), a pure function of plain data so it runs the same in the piscina
 * worker (services/workers/invoice-lines.ts, the billing run) and inline (the upcoming invoice):
 * - a flat item is quantity 1 × its product's price;
 * - a metered item's quantity is its meter's aggregation over the period (shared/usage/aggregate.ts, the
 *   usageQuantity, the rule GET …/usage?window=none reports); no usage is quantity 0 (also for last/max/…,
 *   which GET shows as null);
 * - each line's amount is quantity × unit price rounded half away from zero to the currency's minor unit;
 *   the invoice amount is the exact sum of the lines.
 * Money is decimal.js throughout and crosses thread boundaries as canonical decimal strings.
 */
export interface ItemToPrice {
  product_id: string;
  product_name: string;
  /** Decimal string, up to 9 places. */
  unit_price: string;
  /** Metered items: the meter, its aggregation and unit, and its usage over the billed range. */
  meter: { id: string; aggregation: string; unit: string; usage: WindowStats } | null;
}

export interface InvoiceToPrice {
  subscription_id: string;
  currency: string;
  items: ItemToPrice[];
}

export interface PricedLine {
  product_id: string;
  meter_id: string | null;
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

export interface PricedInvoice {
  subscription_id: string;
  currency: string;
  amount: string;
  lines: PricedLine[];
}

export function priceInvoice(inv: InvoiceToPrice): PricedInvoice {
  let total = new Decimal(0);
  const lines = inv.items.map((item): PricedLine => {
    const quantity = item.meter ? usageQuantity(item.meter.usage, item.meter.aggregation) : new Decimal(1);
    const amount = roundToMinorUnit(quantity.times(item.unit_price), inv.currency);
    total = total.plus(amount);
    return {
      product_id: item.product_id,
      meter_id: item.meter?.id ?? null,
      description: item.meter ? `${item.product_name} — ${groupDigits(quantity)} ${item.meter.unit}` : item.product_name,
      quantity: canonicalDecimal(quantity),
      unit_price: canonicalDecimal(item.unit_price),
      amount: canonicalDecimal(amount),
    };
  });
  return { subscription_id: inv.subscription_id, currency: inv.currency, amount: canonicalDecimal(total), lines };
}

/** "1234567.5" → "1,234,567.5": quantities as people read them on an invoice. */
export function groupDigits(d: Decimal): string {
  const [int, frac] = canonicalDecimal(d).split('.');
  const sign = int!.startsWith('-') ? '-' : '';
  const digits = sign ? int!.slice(1) : int!;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return sign + grouped + (frac ? `.${frac}` : '');
}
