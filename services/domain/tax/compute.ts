import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../../shared/money/decimal.js';
import type { LineTax } from '../pricing/invoice-lines.js';
import type { TaxProfile, TaxRateRow } from './types.js';

/**
 * Tax maths (docs/billing.md "Tax"), pure functions; the invoice-amount pipeline (services/domain/billing/
 * invoice-amounts.ts) applies them to each line's taxable amount (after the discounts attached to it) and BEFORE
 * prepaid credit:
 *   - exclusive rate p: the line's tax is amount × p / 100, added to the invoice;
 *   - inclusive rate p: the tax is extracted from the line's amount, amount × p / (100 + Σ inclusive p of the line),
 *     already inside the total; an exclusive rate beside inclusive ones taxes the line's amount net of them;
 *   - each line's tax at each rate is rounded ONCE, half away from zero, to the currency's minor unit;
 *   - a customer `exempt` or `reverse` (reverse charge) is taxed nothing.
 */
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
