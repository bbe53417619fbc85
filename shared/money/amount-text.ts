import { formatGrouped, type DecimalValue } from './decimal.js';
import { minorUnits } from './currencies.js';

/**
 * THE text of an amount of money for people (emails: subjects and bodies): every minor unit of the currency shown,
 * thousands grouped, the ISO 4217 code after it — "1,234.50 USD", "69.00 USD", "500 JPY" — never "69 USD" beside
 * "69.01 USD". More decimals than the currency has (a unit price) are kept, never rounded away.
 */
export function moneyText(amount: DecimalValue, currency: string): string {
  return `${formatGrouped(amount, minorUnits(currency))} ${currency}`;
}
