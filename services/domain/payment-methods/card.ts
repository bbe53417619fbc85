import type { FieldError } from '../../../shared/errors.js';
import type { CardBrand } from '../../../shared/vocabulary.js';

/** Card rules that don't depend on storage: number normalisation, Luhn, brand, expiry and CVC checks. */

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * Digits, optionally grouped by single spaces or dashes between digits as people type them
 * ("4242 4242-4242 4242"); returns the digits, or null when anything else is present. One pass over the
 * input: a backtracking regex for this shape (`^[0-9]+(?:[ -]?[0-9]+)*$`) took seconds per request.
 */
export function normalizeCardNumber(input: string): string | null {
  const trimmed = input.trim();
  let digits = '';
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed[i]!;
    if (isDigit(c)) digits += c;
    else if ((c === ' ' || c === '-') && isDigit(trimmed[i - 1]) && isDigit(trimmed[i + 1])) continue;
    else return null;
  }
  return digits === '' ? null : digits;
}

/** The Luhn (mod 10) checksum every card number carries in its last digit. */
export function luhnValid(digits: string): boolean {
  if (!/^[0-9]+$/.test(digits) || digits.length < 2) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Brand from the issuer identification number (leading digits), as the card networks publish them. */
export function cardBrand(digits: string): CardBrand {
  const p = (n: number) => Number(digits.slice(0, n));
  if (/^3[47]/.test(digits)) return 'amex';
  if (digits.startsWith('4')) return 'visa';
  if ((p(2) >= 51 && p(2) <= 55) || (p(4) >= 2221 && p(4) <= 2720)) return 'mastercard';
  // Discover's range inside UnionPay's 62 (622126–622925) is checked before UnionPay.
  if (p(4) === 6011 || (p(3) >= 644 && p(3) <= 649) || p(2) === 65 || (p(6) >= 622126 && p(6) <= 622925))
    return 'discover';
  if ((p(3) >= 300 && p(3) <= 305) || p(4) === 3095 || p(2) === 36 || p(2) === 38 || p(2) === 39) return 'diners';
  if (p(4) >= 3528 && p(4) <= 3589) return 'jcb';
  if (p(2) === 62 || (p(4) >= 8100 && p(4) <= 8171)) return 'unionpay';
  return 'unknown';
}

/** A card that passed every check; `number` is digits only. Lives only for the request. */
export interface ValidCard {
  number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
  brand: CardBrand;
  last4: string;
}

export const MIN_DIGITS = 12;
export const MAX_DIGITS = 19;
/** Cards aren't issued for longer than this; a later year is a typo. */
export const MAX_YEARS_AHEAD = 50;

/**
 * Semantic checks of `card` after the schema checked its shape. Fields the schema already rejected
 * (`rejected` holds their names, e.g. `card.number`) are not looked at again, nor are fields of the wrong
 * type. Messages never echo the number or the CVC.
 */
export function checkCard(
  card: Record<string, unknown>,
  now: Date = new Date(),
  prefix = 'card',
  rejected: ReadonlySet<string> = new Set(),
): { errors: FieldError[]; card?: ValidCard } {
  const errors: FieldError[] = [];
  const f = (name: string) => `${prefix}.${name}`;

  let number: string | null = null;
  if (typeof card.number === 'string' && !rejected.has(f('number'))) {
    number = normalizeCardNumber(card.number);
    if (number === null)
      errors.push({ field: f('number'), message: 'must contain only digits, optionally grouped by spaces or dashes' });
    else if (number.length < MIN_DIGITS || number.length > MAX_DIGITS) {
      errors.push({ field: f('number'), message: `must have ${MIN_DIGITS}–${MAX_DIGITS} digits` });
      number = null;
    } else if (!luhnValid(number)) {
      errors.push({ field: f('number'), message: 'is not a valid card number (checksum mismatch)' });
      number = null;
    }
  }
  const brand = number ? cardBrand(number) : undefined;

  const month = card.exp_month;
  const year = card.exp_year;
  const monthOk = Number.isInteger(month) && (month as number) >= 1 && (month as number) <= 12;
  const yearOk = Number.isInteger(year);
  if (Number.isInteger(month) && !monthOk)
    errors.push({ field: f('exp_month'), message: 'must be a month number from 1 to 12' });
  if (yearOk) {
    const y = year as number;
    const thisYear = now.getUTCFullYear();
    const thisMonth = now.getUTCMonth() + 1;
    if (y < thisYear) errors.push({ field: f('exp_year'), message: 'the card has expired' });
    else if (y > thisYear + MAX_YEARS_AHEAD)
      errors.push({
        field: f('exp_year'),
        message: `must be a four-digit year at most ${MAX_YEARS_AHEAD} years ahead`,
      });
    else if (monthOk && y === thisYear && (month as number) < thisMonth)
      errors.push({ field: f('exp_month'), message: 'the card has expired' });
  }

  if (typeof card.cvc === 'string' && !rejected.has(f('cvc'))) {
    if (!/^[0-9]{3,4}$/.test(card.cvc)) errors.push({ field: f('cvc'), message: 'must be 3 or 4 digits' });
    else if (brand === 'amex' && card.cvc.length !== 4)
      errors.push({ field: f('cvc'), message: 'must be 4 digits for American Express cards' });
  }

  if (errors.length || !number || !brand || !monthOk || !yearOk || typeof card.cvc !== 'string') return { errors };
  return {
    errors,
    card: {
      number,
      exp_month: month as number,
      exp_year: year as number,
      cvc: card.cvc,
      brand,
      last4: number.slice(-4),
    },
  };
}
