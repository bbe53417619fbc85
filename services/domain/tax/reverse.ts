import { Decimal, canonicalDecimal, roundToMinorUnit, type DecimalValue } from '../../../shared/money/decimal.js';
import type { LineTax } from '../pricing/invoice-lines.js';

/**
 * The tax a credit reverses (docs/billing.md "Tax"), in proportion to what is credited and exact to the minor unit:
 * after crediting c of a line of amount A taxed T at a rate, round(T × c / A) of that tax has been reversed — so
 * each credit reverses round(T × (before + credit) / A) − round(T × before / A). The shares of successive credits
 * add up to exactly T once the whole line is credited, and never to more.
 */
export function shareOf(tax: DecimalValue, credited: DecimalValue, amount: DecimalValue, currency: string): Decimal {
  const a = new Decimal(amount);
  if (a.lte(0)) return new Decimal(0);
  return roundToMinorUnit(new Decimal(tax).times(credited).div(a), currency);
}

/** What crediting `credit` more of a line (of which `before` was credited) reverses of each of its taxes. */
export function taxReversed(
  line: { amount: string; taxes: LineTax[] | null },
  before: DecimalValue,
  credit: DecimalValue,
  currency: string,
): LineTax[] {
  const after = new Decimal(before).plus(credit);
  return (line.taxes ?? []).map((t) => ({
    tax_rate_id: t.tax_rate_id,
    amount: canonicalDecimal(
      shareOf(t.amount, after, line.amount, currency).minus(shareOf(t.amount, before, line.amount, currency)),
    ),
  }));
}
