import type { PgClient } from '../../../shared/clients/postgres.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import type { DimensionPriceModel, DimensionPrices } from '../pricing/dimension-prices.js';
import { minimumIn, priceModelIn, productCurrencies, productPriceIn } from '../pricing/price-books.js';
import type { PriceModel } from '../pricing/price-models.js';
import { lockProductsForShare } from '../products/store.js';
import type { Item, ItemRequest } from '../subscriptions/types.js';
import type { PlanVersionRow } from './types.js';

/**
 * Price books of a plan (docs/plans.md "Price books"): a plan version is in a currency when every item's product
 * has a price in it (its own or a currency option) and every amount the item carries itself has one too — its
 * minimum_amount (the item's `currency_options: {"EUR": {"minimum_amount": …}}`, as a coupon's amount_off) and each
 * per-dimension price (the model's `currency_options`, as a product's). A plan version never changes, so a
 * subscription takes the item's amounts in its currency when it subscribes (planItemsIn): its items are in its
 * currency like any subscription's, and close, upcoming, thresholds and adjustments bill them as they are.
 */

/** A plan item as a subscription in `currency` gets it, and the item's fields that have no amount in it. */
export function planItemIn(
  item: Item,
  planCurrency: string,
  currency: string,
): { item: ItemRequest; missing: string[] } {
  const missing: string[] = [];
  const { currency_options: minimumOptions, ...rest } = item;
  let minimum: string | undefined;
  if (item.minimum_amount !== null) {
    minimum = minimumIn(item.minimum_amount, planCurrency, minimumOptions, currency) ?? undefined;
    if (minimum === undefined) missing.push('minimum_amount');
  }
  const dp = item.dimension_prices;
  const modelIn = (model: DimensionPriceModel, field: string): PriceModel => {
    const { currency_options, ...own } = model;
    const priced = priceModelIn(own as PriceModel, planCurrency, currency_options, currency);
    if (!priced) missing.push(field);
    return priced ?? (own as PriceModel);
  };
  const dimensionPrices: DimensionPrices | undefined = dp
    ? {
        dimension: dp.dimension,
        prices: dp.prices.map((p, j) => ({ value: p.value, price: modelIn(p.price, `prices[${j}].price`) })),
        default_price: dp.default_price ? modelIn(dp.default_price, 'default_price') : null,
      }
    : undefined;
  return {
    item: { ...rest, minimum_amount: minimum, dimension_prices: dimensionPrices },
    missing,
  };
}

/** The version's items carry amounts of their own (a minimum, per-dimension prices): they have books to choose. */
export const hasOwnAmounts = (version: PlanVersionRow): boolean =>
  version.items.some((i) => i.minimum_amount !== null || i.dimension_prices);

/**
 * A plan version's items as a subscription's item request in `currency` (checked again for the subscriber's
 * account). A currency the version has no amount in → 422 currency_not_priced (checkPlanPricedIn says which).
 */
export function planItemsIn(version: PlanVersionRow, currency: string): ItemRequest[] {
  const out = version.items.map((item) => planItemIn(item, version.currency, currency));
  const errors = out.flatMap((o, i) => o.missing.map((f) => missingError(version, currency, `items[${i}].${f}`)));
  if (errors.length) throw new ValidationError(errors, undefined, 'currency_not_priced');
  return out.map((o) => o.item);
}

const missingError = (version: PlanVersionRow, currency: string, what: string, field = 'plan_id'): FieldError => ({
  field,
  message: `plan ${version.plan_id} version ${version.version} has no price in ${currency}: ${what} is priced in ${version.currency} only`,
});

/**
 * Subscribing a customer in `currency` to the version: every item's product and every amount of the items priced in
 * it, else 422 currency_not_priced on `field` (the request's field naming the version) naming the currency and each
 * item (or item field) that has none.
 */
export async function checkPlanPricedIn(
  client: PgClient,
  version: PlanVersionRow,
  currency: string,
  field = 'plan_id',
): Promise<void> {
  if (currency === version.currency) return;
  const products = new Map(
    (await lockProductsForShare(client, [...new Set(version.items.map((i) => i.product_id))])).map((p) => [p.id, p]),
  );
  const at = `plan ${version.plan_id} version ${version.version}`;
  const errors: FieldError[] = version.items.flatMap((item, i) => {
    const product = products.get(item.product_id);
    if (!product || !productPriceIn(product, currency))
      return [
        {
          field,
          message: `${at} has no price in ${currency}: items[${i}] (product ${item.product_id}) is priced in ${product ? productCurrencies(product).join(', ') : 'no currency'}`,
        },
      ];
    return planItemIn(item, version.currency, currency).missing.map((f) =>
      missingError(version, currency, `items[${i}].${f}`, field),
    );
  });
  if (errors.length) throw new ValidationError(errors, undefined, 'currency_not_priced');
}

/** A plan item's price books are in other currencies than the plan's (its own amounts are in that one): else 422. */
export function checkPlanBooks(items: ItemRequest[], planCurrency: string): void {
  const own = (books: object | undefined) => (books && Object.hasOwn(books, planCurrency) ? [planCurrency] : []);
  const problem = (field: string): FieldError => ({
    field: `${field}.currency_options.${planCurrency}`,
    message: `repeats ${planCurrency}: the plan’s currency, in which the item’s own amount is`,
  });
  const errors = items.flatMap((item, i) => [
    ...own(item.currency_options).map(() => problem(`items[${i}]`)),
    ...(item.dimension_prices?.prices ?? []).flatMap((p, j) =>
      own(p.price.currency_options).map(() => problem(`items[${i}].prices[${j}].price`)),
    ),
    ...own(item.dimension_prices?.default_price?.currency_options).map(() => problem(`items[${i}].default_price`)),
  ]);
  if (errors.length) throw new ValidationError(errors);
}
