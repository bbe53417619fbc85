import { USAGE_LIMITS } from './limits.js';
import { stripTrailing } from '../strings.js';

/**
 * The decimal text of a usage value as stored in ClickHouse, or undefined when it has more than 9 decimal
 * places. Values arrive as JSON numbers (IEEE-754 doubles): the shortest text that reads back as the same
 * double is what the caller wrote whenever they wrote at most 15 significant digits, so 0.1 stays 0.1 and
 * sums in Decimal(38, 9) are exact (0.1 + 0.2 = 0.3). Callers check finiteness and range first.
 */
export function decimalText(v: number): string | undefined {
  if (Number.isInteger(v)) return v === 0 ? '0' : String(v); // |v| ≤ 1e18: never an exponent; -0 → "0"
  const s = String(v);
  if (s.indexOf('e') === -1) {
    const dot = s.indexOf('.');
    return s.length - dot - 1 > USAGE_LIMITS.maxDecimals ? undefined : s;
  }
  // Non-integers print with an exponent only below 1e-6: "1.5e-7". Expand to plain digits.
  const fixed = v.toFixed(USAGE_LIMITS.maxDecimals);
  if (Number(fixed) !== v) return undefined;
  return stripTrailing(fixed, '0');
}

/** The problem code of a value no meter can store exactly as written: it is refused, never rounded. */
export const VALUE_OUT_OF_RANGE = 'value_out_of_range';
export const RANGE_MESSAGE = 'must be between -1e18 and 1e18';
export const INTEGER_PRECISION_MESSAGE = `must be at most ${Number.MAX_SAFE_INTEGER} in magnitude when an integer: a JSON number can't carry larger integers exactly`;
/** A double holds 15 significant decimal digits exactly; beyond that the number read may not be the one written. */
export const MAX_SIGNIFICANT_DIGITS = 15;
export const PRECISION_MESSAGE = `must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits: a JSON number can't carry more exactly`;

/** Why a value is unacceptable for a meter of this type, or undefined when it is fine. */
export function valueProblem(v: number, nonNegative: boolean): string | undefined {
  if (!Number.isFinite(v)) return 'must be a finite number';
  if (nonNegative && v < 0) return 'must be greater than or equal to 0 for a counter meter';
  if (v > USAGE_LIMITS.maxAbsValue || v < -USAGE_LIMITS.maxAbsValue) return RANGE_MESSAGE;
  // 123456789012345678 arrives as the double 123456789012345680: refuse what can't be what was sent.
  if (Number.isInteger(v)) return Number.isSafeInteger(v) ? undefined : INTEGER_PRECISION_MESSAGE;
  if (significantDigits(String(v)) > MAX_SIGNIFICANT_DIGITS) return PRECISION_MESSAGE;
  return undefined;
}

/** Significant digits of a number's shortest text ("-0.00120" → 3, "1.5e-7" → 2). */
function significantDigits(text: string): number {
  const mantissa = text.split('e')[0]!.replace('-', '').replace('.', '');
  let start = 0;
  while (start < mantissa.length - 1 && mantissa[start] === '0') start++;
  return stripTrailing(mantissa.slice(start), '0').length || 1;
}
