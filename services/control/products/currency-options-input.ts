import type { FieldError } from '../../../shared/errors.js';
import { CURRENCY_CODE_MESSAGE, normalizeCurrency } from '../../../shared/money/currencies.js';
import type { Pricing } from '../../../shared/vocabulary.js';
import type { ProductCurrencyOptions } from '../../domain/pricing/price-books.js';
import { checkAmount, checkTiers, fieldOf, type LiteralAt } from './price-model-input.js';

type OptionInput = {
  price?: number;
  tiers?: { up_to: number | null; unit_price: number; flat_price?: number }[];
};

/**
 * A product's price books as the client wrote them (create and PATCH): each key an ISO 4217 code (any case, stored
 * upper), other than the product's own `currency` (when known here); each option the price for a flat, metered or
 * package product, the tiers (checked like the product's) for a tiered one — `pricing` undefined (a PATCH, which
 * checks the shape against the stored product) accepts exactly one of them. `base`: the path of the object that
 * carries them (a plan item's per-dimension price model; a product's are at the body's top).
 */
export function checkCurrencyOptions(
  input: Record<string, OptionInput> | undefined,
  literal: LiteralAt,
  errors: FieldError[],
  product: { currency?: string; pricing?: Pricing },
  base: (string | number)[] = [],
): ProductCurrencyOptions | undefined {
  if (input === undefined) return undefined;
  const out: ProductCurrencyOptions = {};
  for (const [key, option] of Object.entries(input)) {
    const at = [...base, 'currency_options', key];
    const field = fieldOf(at);
    const code = normalizeCurrency(key);
    if (!code) {
      errors.push({ field, message: CURRENCY_CODE_MESSAGE });
      continue;
    }
    if (code === product.currency || Object.hasOwn(out, code)) {
      errors.push({ field, message: `repeats ${code}: give each currency once (currency is ${product.currency})` });
      continue;
    }
    const amount = (path: (string | number)[], opts: { positive?: boolean } = {}) =>
      checkAmount(literal(path), path, errors, opts);
    const tiered = product.pricing === undefined ? option.tiers !== undefined : product.pricing === 'tiered';
    if (tiered) {
      if (option.price !== undefined)
        errors.push({ field: `${field}.price`, message: 'must be omitted for tiered pricing: give tiers' });
      if (option.tiers === undefined)
        errors.push({ field: `${field}.tiers`, message: 'is required for tiered pricing' });
      else out[code] = { tiers: checkTiers(option.tiers, amount, errors, at) };
    } else {
      if (option.tiers !== undefined) errors.push({ field: `${field}.tiers`, message: 'is only for tiered pricing' });
      if (option.price === undefined) errors.push({ field: `${field}.price`, message: 'is required' });
      else out[code] = { price: amount([...at, 'price']) ?? '0' };
    }
  }
  return out;
}
