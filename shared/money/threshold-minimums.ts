import { Decimal, parseAmount } from './decimal.js';
import { minorUnits, normalizeCurrency } from './currencies.js';

/**
 * The smallest billing_threshold per currency (issue 49, docs/billing.md "Progressive billing"): a threshold of
 * 0.01 issued, charged and emailed an invoice every few seconds. BILLING_THRESHOLD_MINIMUMS names currencies
 * whose minimum differs; every other currency's is 1 of its major unit (1.00 USD, 1 JPY, 1.000 KWD).
 */
export type ThresholdMinimums = Readonly<Record<string, string>>;

export const DEFAULT_THRESHOLD_MINIMUM = '1';

/** The minimum in `currency`, as exact decimal text. */
export function thresholdMinimum(currency: string, minimums: ThresholdMinimums): string {
  return minimums[currency] ?? DEFAULT_THRESHOLD_MINIMUM;
}

/**
 * Parses `USD:5,JPY:500`: ISO 4217 codes (any case) with an amount greater than 0 of at most the currency's minor
 * unit's decimals (ISO 4217 exponents). Throws Error naming the first bad entry.
 */
export function parseThresholdMinimums(raw: string): ThresholdMinimums {
  const out: Record<string, string> = {};
  for (const entry of raw.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const m = /^([A-Za-z]{3}):(\S+)$/.exec(entry);
    if (!m) throw new Error(`each entry must be CURRENCY:AMOUNT (USD:5), got "${entry}"`);
    const currency = normalizeCurrency(m[1]!);
    if (!currency) throw new Error(`"${m[1]}" is not an ISO 4217 currency code`);
    const amount = parseAmount(m[2]!);
    if ('error' in amount || new Decimal(amount.value).lte(0))
      throw new Error(`the minimum of ${currency} must be a decimal number greater than 0, got "${m[2]}"`);
    if (new Decimal(amount.value).decimalPlaces() > minorUnits(currency))
      throw new Error(`the minimum of ${currency} has at most ${minorUnits(currency)} decimal places, got "${m[2]}"`);
    out[currency] = amount.value;
  }
  return Object.freeze(out);
}
