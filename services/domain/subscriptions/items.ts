import type { PgClient } from '../../../shared/clients/postgres.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { Decimal } from '../../../shared/money/decimal.js';
import type { Item, ItemRequest } from './types.js';
import type { DimensionPrices } from '../pricing/dimension-prices.js';
import { lockProductsForShare } from '../products/store.js';
import { productCurrencies, productPriceIn } from '../pricing/price-books.js';
import { meterDimensions, ownMeterIds } from '../meters/store.js';
import { dimensionKeyProblem } from '../../../shared/usage/dimensions.js';

/**
 * Checks items against the catalog and the account's meters, inside the caller's transaction:
 * every product exists; a metered product names a meter of this account, a flat one none; no item twice;
 * every product priced in `requiredCurrency` — the subscription's or its customer's, one of the product's price books
 * (services/domain/pricing/price-books.ts; 422 currency_not_priced naming the item) — or, with none asked for,
 * all products in one own currency; a product that
 * does not allow customer meters (`allow_customer_meters: false`) is priced by a deployment meter only.
 * The products are locked FOR SHARE so that a concurrent product DELETE waits and then sees this subscription.
 */
export async function resolveItems(
  client: PgClient,
  accountId: string,
  input: ItemRequest[],
  requiredCurrency?: string,
): Promise<{ items: Item[]; currency: string }> {
  const items: Item[] = input.map((i) => ({
    product_id: i.product_id,
    meter_id: i.meter_id ?? null,
    minimum_amount: i.minimum_amount ?? null,
    group_by: i.group_by ?? [],
    dimension_prices: i.dimension_prices ?? null,
    ...(i.currency_options ? { currency_options: i.currency_options } : {}),
    quantity: i.quantity ?? 1,
  }));
  const productIds = [...new Set(items.map((i) => i.product_id))];
  const meterIds = [...new Set(items.flatMap((i) => (i.meter_id ? [i.meter_id] : [])))];
  // One after another: a transaction's client runs one query at a time anyway (pg queues the rest, and pg 9 will
  // refuse a query sent while another runs).
  const products = await lockProductsForShare(client, productIds);
  const knownMeters = await meterDimensions(client, accountId, meterIds);
  const ownMeters = await ownMeterIds(client, accountId, meterIds);
  const productById = new Map(products.map((p) => [p.id, p]));

  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const at = `items[${i}]`;
    const pairKey = itemKey(item);
    const earlier = seen.get(pairKey);
    if (earlier !== undefined) errors.push({ field: at, message: `repeats items[${earlier}]` });
    else seen.set(pairKey, i);
    const product = productById.get(item.product_id);
    if (!product) {
      errors.push({ field: `${at}.product_id`, message: 'no such product' });
      return;
    }
    if (product.pricing !== 'flat') {
      if (!item.meter_id)
        errors.push({ field: `${at}.meter_id`, message: `is required for a ${product.pricing} product` });
      else if (!knownMeters.has(item.meter_id)) errors.push({ field: `${at}.meter_id`, message: 'no such meter' });
      else if (!product.allow_customer_meters && ownMeters.has(item.meter_id))
        errors.push({
          field: `${at}.meter_id`,
          message: `must be a deployment meter: product ${product.id} does not allow the customer's own meters`,
        });
      else groupByProblems(item, knownMeters.get(item.meter_id)!, at, errors);
      if (item.quantity !== 1)
        errors.push({
          field: `${at}.quantity`,
          message: `is only for flat products (a ${product.pricing} product's quantity is its usage)`,
        });
    } else {
      if (item.meter_id) errors.push({ field: `${at}.meter_id`, message: 'must be null for a flat product' });
      if (item.minimum_amount !== null)
        errors.push({
          field: `${at}.minimum_amount`,
          message: 'is only for usage-priced (metered, tiered, package) products',
        });
      if (item.group_by.length)
        errors.push({
          field: `${at}.group_by`,
          message: 'is only for usage-priced (metered, tiered, package) products',
        });
      if (item.dimension_prices)
        errors.push({
          field: `${at}.dimension`,
          message: 'is only for usage-priced (metered, tiered, package) products',
        });
    }
  });
  if (errors.length) throw new ValidationError(errors);

  const currency = requiredCurrency ?? oneCurrency(items.map((i) => productById.get(i.product_id)!.currency));
  const unpriced = items.flatMap((item, i) => {
    const product = productById.get(item.product_id)!;
    if (productPriceIn(product, currency)) return [];
    return [
      {
        field: `items[${i}].product_id`,
        message: `product ${product.id} has no price in ${currency} (it has ${productCurrencies(product).join(', ')})`,
      },
    ];
  });
  if (unpriced.length) throw new ValidationError(unpriced, undefined, 'currency_not_priced');
  return { items, currency };
}

/** Without a currency asked for: the products' own, which must be one (a customer's currency picks a price book). */
function oneCurrency(found: string[]): string {
  const currencies = [...new Set(found)].sort();
  if (currencies.length > 1)
    throw new ValidationError([
      { field: 'items', message: `must all be in one currency (found ${currencies.join(', ')})` },
    ]);
  return currencies[0]!;
}

/**
 * Billing per group (issue 18): the keys must be dimensions the meter may carry (its declared ones when it
 * declares some — the rule of GET …/usage's group_by); a minimum commitment can't be split across groups.
 */
function groupByProblems(item: Item, declared: readonly string[], at: string, errors: FieldError[]): void {
  item.group_by.forEach((key, k) => {
    const problem = dimensionKeyProblem(key, declared);
    if (problem) errors.push({ field: `${at}.group_by[${k}]`, message: problem });
  });
  if (item.dimension_prices) {
    const problem = dimensionKeyProblem(item.dimension_prices.dimension, declared);
    if (problem) errors.push({ field: `${at}.dimension`, message: problem });
  }
  if (item.group_by.length && item.minimum_amount !== null)
    errors.push({
      field: `${at}.minimum_amount`,
      message: 'is not available with group_by (a minimum applies to one usage line)',
    });
}

/** Items are the same item (product and meter: no subscription has one twice) — perhaps with other terms. */
export const itemKey = (i: Item): string => `${i.product_id}\u0000${i.meter_id ?? ''}`;

/** The same item on the same terms: a change between them is no change (no new history row, no proration). */
export function sameItem(x: Item, y: Item): boolean {
  const sameMinimum = (a: string | null, b: string | null) =>
    a === null || b === null ? a === b : new Decimal(a).eq(b);
  const sameGroups = (a: string[], b: string[]) => a.length === b.length && a.every((k, i) => k === b[i]);
  return (
    itemKey(x) === itemKey(y) &&
    x.quantity === y.quantity &&
    sameMinimum(x.minimum_amount, y.minimum_amount) &&
    sameGroups(x.group_by, y.group_by) &&
    sameDimensionPrices(x.dimension_prices ?? null, y.dimension_prices ?? null)
  );
}

/** Per-dimension prices that price alike: the same dimension, values, models and amounts (decimals compared exactly). */
function sameDimensionPrices(a: DimensionPrices | null, b: DimensionPrices | null): boolean {
  if (a === null || b === null) return a === b;
  return canonicalJson(a) === canonicalJson(b);
}

/** JSON with every amount canonical ("0.50" → "0.5"), so equal prices compare equal (values compare as written). */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (k, x) =>
    k !== 'value' && typeof x === 'string' && /^-?\d+(\.\d+)?$/.test(x) ? new Decimal(x).toFixed() : x,
  );
}

export function sameItems(a: Item[], b: Item[]): boolean {
  return a.length === b.length && a.every((x, i) => sameItem(x, b[i]!));
}
