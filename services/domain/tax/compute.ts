import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { sumOfLines, type LineTax, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import type { TaxProfile, TaxRateRow } from './types.js';

/**
 * Invoice tax (docs/billing.md "Tax"), a pure function of the priced invoice, the customer's tax profile and the
 * rates of each product. Tax applies to the charge lines — flat, usage, minimum commitment and adjustment lines,
 * each at its product's rates — after discounts and BEFORE prepaid credit (the close applies credit after this):
 *   - exclusive rate p: the line's tax is amount × p / 100, added to the invoice;
 *   - inclusive rate p: the tax is extracted from the line's amount, amount × p / (100 + Σ inclusive p of the line),
 *     already inside the total; an exclusive rate beside inclusive ones taxes the line's amount net of them;
 *   - each line's tax at each rate is rounded half away from zero to the currency's minor unit, then summed into
 *     one `tax` line per rate, so the invoice's tax is exactly Σ of what its lines carry (a credit note reverses it
 *     per line: services/domain/billing/credit-notes.ts);
 *   - a customer `exempt` or `reverse` (reverse charge) is taxed nothing.
 */
export type ProductRates = (productId: string) => readonly TaxRateRow[];

export interface InvoiceTotals {
  subtotal: string;
  tax: string;
}

/** Lines tax applies to: what the customer is charged for a product (not credit, not tax). */
export function isTaxable(l: Pick<PricedLine, 'type' | 'product_id'>): boolean {
  return l.product_id !== null && l.type !== 'credit' && l.type !== 'tax';
}

/** The rates that apply to a product's lines: the product's own (active) ones, else the customer's country's defaults. */
export function ratesOf(
  named: readonly string[],
  profile: TaxProfile,
  active: ReadonlyMap<string, TaxRateRow>,
): TaxRateRow[] {
  if (profile.tax_exempt !== 'none') return [];
  if (named.length) return named.flatMap((id) => active.get(id) ?? []);
  if (!profile.country) return [];
  return [...active.values()].filter(
    (r) => r.country === profile.country && (r.region === null || r.region === profile.region),
  );
}

/** One line's tax at each of its rates, each rounded to the minor unit. */
export function lineTaxes(amount: string, rates: readonly TaxRateRow[], currency: string): LineTax[] {
  const gross = new Decimal(amount);
  const inclusive = rates.filter((r) => r.inclusive);
  const inclusiveSum = inclusive.reduce((s, r) => s.plus(r.percentage), new Decimal(0));
  const included = inclusive.map((r) => ({
    tax_rate_id: r.id,
    amount: roundToMinorUnit(gross.times(r.percentage).div(inclusiveSum.plus(100)), currency),
  }));
  const net = included.reduce((s, t) => s.minus(t.amount), gross);
  const added = rates
    .filter((r) => !r.inclusive)
    .map((r) => ({ tax_rate_id: r.id, amount: roundToMinorUnit(net.times(r.percentage).div(100), currency) }));
  const byId = new Map([...included, ...added].map((t) => [t.tax_rate_id, canonicalDecimal(t.amount)]));
  return rates.map((r) => ({ tax_rate_id: r.id, amount: byId.get(r.id)! }));
}

/** "VAT 20 %", "MwSt 19 % (included)". */
export function rateLabel(r: Pick<TaxRateRow, 'name' | 'percentage' | 'inclusive'>): string {
  return `${r.name} ${canonicalDecimal(new Decimal(r.percentage))} %${r.inclusive ? ' (included)' : ''}`;
}

/**
 * THE rule: taxes `priced` in place — each taxable line gets its `taxes`, one `tax` line per rate is appended
 * (in the order the rates first appear), and the amount becomes Σ lines again. Returns the subtotal (Σ of the
 * charge lines as priced) and the tax (Σ at every rate, included or added).
 */
export function applyTax(
  priced: PricedInvoice,
  profile: TaxProfile,
  rates: ProductRates,
  rateById: (id: string) => TaxRateRow | undefined = () => undefined,
): InvoiceTotals {
  const subtotal = sumOfLines(priced.lines.filter((l) => isTaxable(l) || l.type === 'deduction'));
  const perRate = new Map<string, { rate: TaxRateRow; base: Decimal; tax: Decimal }>();
  // A deduction (progressive billing) takes back, at each rate, exactly the tax its threshold invoice billed: the
  // period's invoices together carry the tax of the whole period, whatever the customer's profile is now.
  for (const l of priced.lines) {
    if (l.type !== 'deduction') continue;
    for (const t of l.taxes ?? []) {
      const rate = rateById(t.tax_rate_id);
      if (!rate) continue;
      const r = perRate.get(t.tax_rate_id) ?? { rate, base: new Decimal(0), tax: new Decimal(0) };
      r.base = r.base.plus(t.base ?? l.amount);
      r.tax = r.tax.plus(t.amount);
      perRate.set(t.tax_rate_id, r);
    }
  }
  if (profile.tax_exempt === 'none') {
    for (const l of priced.lines) {
      if (!isTaxable(l)) continue;
      const own = rates(l.product_id!);
      if (own.length === 0) continue;
      l.taxes = lineTaxes(l.amount, own, priced.currency);
      l.taxes.forEach((t, i) => {
        const r = perRate.get(t.tax_rate_id) ?? { rate: own[i]!, base: new Decimal(0), tax: new Decimal(0) };
        r.base = r.base.plus(l.amount);
        r.tax = r.tax.plus(t.amount);
        perRate.set(t.tax_rate_id, r);
      });
    }
  }
  let tax = new Decimal(0);
  for (const { rate, base, tax: t } of perRate.values()) {
    tax = tax.plus(t);
    const added = rate.inclusive ? '0' : canonicalDecimal(t);
    priced.lines.push({
      type: 'tax',
      product_id: null,
      meter_id: null,
      // The taxed base as printed on an invoice: in the currency's minor unit ("on 129.00", "on 1789" JPY).
      description: `${rateLabel(rate)} on ${base.toFixed(minorUnits(priced.currency))}`,
      quantity: '1',
      unit_price: added,
      amount: added,
      price_model: null,
      adjusts_invoice_id: null,
      tax_rate_id: rate.id,
      tax_amount: canonicalDecimal(t),
    });
  }
  priced.amount = canonicalDecimal(sumOfLines(priced.lines));
  return { subtotal: canonicalDecimal(subtotal), tax: canonicalDecimal(tax) };
}
