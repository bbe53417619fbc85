import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import type { CouponTerms } from './types.js';

/**
 * Discount maths (docs/coupons.md), pure functions of exact decimals:
 * - a period's discount is taken on its charges (flat, usage and minimum-commitment lines; late-usage adjustments
 *   count toward the period they bill), before tax and prepaid credit, never below zero;
 * - percent_off p: Σ charges × p / 100, rounded ONCE, on the total, half to even to the currency's minor unit;
 * - amount_off a: min(a, Σ charges) — capped at the charges, so the invoice never goes below zero;
 * - nothing to discount (Σ ≤ 0): 0;
 * - the total is split across the products charged (one `discount` line each, taxed at that product's rates) in
 *   proportion to their charges, by whole minor units: each share rounded down, the units left over going to the
 *   largest remainders (ties: product id order). The lines add up to the total exactly.
 */
export function discountOf(
  terms: Pick<CouponTerms, 'percent_off' | 'amount_off'>,
  charges: Decimal,
  currency: string,
): Decimal {
  if (!charges.gt(0)) return new Decimal(0);
  if (terms.percent_off !== null)
    return charges.times(terms.percent_off).div(100).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_EVEN);
  return Decimal.min(new Decimal(terms.amount_off!), charges);
}

/** "25 % off", "10.00 USD off" (amounts in the currency's minor unit). */
export function termsLabel(terms: Pick<CouponTerms, 'percent_off' | 'amount_off' | 'currency'>): string {
  if (terms.percent_off !== null) return `${canonicalDecimal(new Decimal(terms.percent_off))} % off`;
  return `${new Decimal(terms.amount_off!).toFixed(minorUnits(terms.currency!))} ${terms.currency} off`;
}

/**
 * Splits `total` (≥ 0, in minor units) over weights (each product's charges; negative ones weigh 0) in proportion,
 * by whole minor units, largest remainder first; the shares add up to `total` exactly. Weights in product id order.
 */
export function allocate(total: Decimal, weights: readonly Decimal[], currency: string): Decimal[] {
  const unit = new Decimal(10).pow(-minorUnits(currency));
  const w = weights.map((x) => Decimal.max(x, 0));
  const sum = w.reduce((s, x) => s.plus(x), new Decimal(0));
  if (sum.isZero() || total.isZero()) return w.map(() => new Decimal(0));
  const exact = w.map((x) => total.times(x).div(sum));
  const shares = exact.map((x) => x.div(unit).floor().times(unit));
  let left = total
    .minus(shares.reduce((s, x) => s.plus(x), new Decimal(0)))
    .div(unit)
    .round()
    .toNumber();
  const order = exact
    .map((x, i) => ({ i, rest: x.minus(shares[i]!) }))
    .sort((a, b) => b.rest.comparedTo(a.rest) || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    shares[i] = shares[i]!.plus(unit);
    left--;
  }
  return shares;
}
