import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import type { ItemInput, PlanItemInput, PlanPriceModelInput } from '../../../shared/api/subscriptions.js';
import type { DimensionPriceModel } from '../../domain/pricing/dimension-prices.js';
import type { MinimumCurrencyOptions } from '../../domain/pricing/price-books.js';
import type { ItemRequest } from '../../domain/subscriptions/types.js';
import { checkCurrencyOptions } from '../products/currency-options-input.js';
import type { LiteralAt } from '../products/price-model-input.js';
import { exactItemsInto } from '../subscriptions/input.js';

/**
 * A plan version's items as the client wrote them: a subscription's items (exactItems), plus their price books
 * (docs/plans.md "Price books") — an item's `currency_options: {"EUR": {"minimum_amount": 45}}` (each amount exact
 * to that currency's minor unit, as a coupon's amount_off: a minimum is money billed as it is) and each per-dimension
 * price model's `currency_options` (as a product's: a unit price, ≤ 9 decimals, or tiers for a tiered model). Codes
 * any case, stored upper; that none is the plan's own currency is checked where the plan's currency is known
 * (services/domain/plans/store.ts, checkPlanBooks).
 */
export function exactPlanItems(ctx: RequestContext, items: PlanItemInput[]): ItemRequest[] {
  const literal = numberLiteralsOf(ctx.rawBody);
  const errors: FieldError[] = [];
  const out = exactItemsInto(literal, items.map(withoutBooks), errors);
  items.forEach((item, i) => {
    const request = out[i]!;
    const minimum = minimumOptions(item, i, literal, errors);
    if (minimum) request.currency_options = minimum;
    const dp = request.dimension_prices;
    if (!dp) return;
    const withBooks = (model: DimensionPriceModel, input: PlanPriceModelInput, path: (string | number)[]) => {
      const books = checkCurrencyOptions(input.currency_options, literal, errors, { pricing: input.pricing }, path);
      return books && Object.keys(books).length ? { ...model, currency_options: books } : model;
    };
    dp.prices = dp.prices.map((p, j) => ({
      ...p,
      price: withBooks(p.price, item.prices![j]!.price, ['items', i, 'prices', j, 'price']),
    }));
    if (dp.default_price && item.default_price)
      dp.default_price = withBooks(dp.default_price, item.default_price, ['items', i, 'default_price']);
  });
  if (errors.length) throw new ValidationError(errors);
  return out;
}

/** The item as a subscription's (its books checked on their own). */
function withoutBooks({ currency_options: _, prices, default_price, ...item }: PlanItemInput): ItemInput {
  const model = ({ currency_options: _books, ...m }: PlanPriceModelInput) => m;
  return {
    ...item,
    ...(prices ? { prices: prices.map((p) => ({ value: p.value, price: model(p.price) })) } : {}),
    ...(default_price !== undefined ? { default_price: default_price && model(default_price) } : {}),
  };
}

/** An item's minimum in other currencies: only with its own minimum_amount; each exact to the currency's minor unit. */
function minimumOptions(
  item: PlanItemInput,
  i: number,
  literal: LiteralAt,
  errors: FieldError[],
): MinimumCurrencyOptions | undefined {
  if (item.currency_options === undefined) return undefined;
  const at = `items[${i}].currency_options`;
  if (item.minimum_amount === undefined) {
    errors.push({ field: at, message: 'is only with minimum_amount (the minimum in other currencies)' });
    return undefined;
  }
  const out: MinimumCurrencyOptions = {};
  for (const key of Object.keys(item.currency_options)) {
    const field = `${at}.${key}`;
    const code = normalizeCurrency(key);
    if (!code) errors.push({ field, message: CURRENCY_CODE_MESSAGE });
    else if (Object.hasOwn(out, code)) errors.push({ field, message: `repeats ${code}: give each currency once` });
    else {
      const r = parseAmount(literal(['items', i, 'currency_options', key, 'minimum_amount']) ?? '', {
        maxScale: minorUnits(code),
      });
      if ('error' in r) errors.push({ field: `${field}.minimum_amount`, message: r.error });
      else out[code] = { minimum_amount: r.value };
    }
  }
  return Object.keys(out).length ? out : undefined;
}
