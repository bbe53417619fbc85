import { Decimal as DecimalJs } from 'decimal.js';
import { minorUnits } from './currencies.js';

/**
 * Decimal arithmetic for money: 60 significant digits and ROUND_HALF_UP, which decimal.js defines as "half away
 * from zero", the invoice rounding rule. What holds: a sum or product is exact while its result fits in 60
 * significant digits — a NUMERIC(38, 9) price (≤ 38 digits) times a quantity of ≤ 22 significant digits, or any
 * amount below 10^42 carrying 18 decimals; past that (e.g. a 38-digit price × a 38-digit quantity) the result is
 * rounded to 60 significant digits. A division (pro-rating, tax, percent) is rounded to 60 significant digits
 * before the minor-unit rounding, so invoice amounts are exact for the magnitudes billed (≤ 10^29 with 9 decimals).
 * Never do money maths with JS numbers.
 */
export const Decimal = DecimalJs.clone({
  precision: 60,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -100,
  toExpPos: 100,
});
export type Decimal = InstanceType<typeof Decimal>;
export type DecimalValue = string | number | Decimal;

/** Unit prices: at most 9 decimals (NUMERIC(38, 9), ClickHouse Decimal(38, 9)), so at most 29 integer digits. */
export const MAX_SCALE = 9;
export const MAX_INTEGER_DIGITS = 29;

/** Plain notation, no exponent, no trailing zeros, never "-0": "0.1", "19.99", "0.000000001", "1000". */
export function canonicalDecimal(value: DecimalValue): string {
  const d = new Decimal(value);
  if (d.isZero()) return '0';
  return d.toFixed();
}

/**
 * Checks a price or other non-negative amount given as an exact decimal literal. Returns the canonical
 * string, or a message saying what is wrong (for a 422 naming the field).
 */
export function parseAmount(literal: string, opts: { maxScale?: number } = {}): { value: string } | { error: string } {
  const maxScale = opts.maxScale ?? MAX_SCALE;
  let d: Decimal;
  try {
    d = new Decimal(literal);
  } catch {
    return { error: 'must be a decimal number' };
  }
  if (!d.isFinite()) return { error: 'must be a finite decimal number' };
  if (d.isNegative() && !d.isZero()) return { error: 'must be greater than or equal to 0' };
  if (d.decimalPlaces() > maxScale) return { error: `must have at most ${maxScale} decimal places` };
  if (!d.isZero() && d.e + 1 > MAX_INTEGER_DIGITS) return { error: `must be less than 10^${MAX_INTEGER_DIGITS}` };
  return { value: canonicalDecimal(d) };
}

/** Rounds an amount to the currency's minor unit, half away from zero (USD 2 decimals, JPY 0, KWD 3). */
export function roundToMinorUnit(amount: DecimalValue, currency: string): Decimal {
  return new Decimal(amount).toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);
}

/**
 * 1234567.5 → "1,234,567.5", with at least `minDecimals` decimals: amounts and quantities as people read them on
 * an invoice and its PDF. A loop rather than the usual look-ahead regex, which rescans the rest of the digits at
 * every position (quadratic).
 */
export function formatGrouped(value: DecimalValue, minDecimals = 0): string {
  const d = new Decimal(value);
  const text = d.abs().toFixed(Math.max(minDecimals, d.decimalPlaces()));
  const dot = text.indexOf('.');
  const int = dot < 0 ? text : text.slice(0, dot);
  let grouped = '';
  for (let i = 0; i < int.length; i++) {
    if (i > 0 && (int.length - i) % 3 === 0) grouped += ',';
    grouped += int[i];
  }
  return (d.isNegative() && !d.isZero() ? '-' : '') + grouped + (dot < 0 ? '' : text.slice(dot));
}
