import type { PgClient } from '../../../shared/clients/postgres.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { productCurrencies, productPriceIn } from '../pricing/price-books.js';
import { lockProductsForShare } from '../products/store.js';
import type { PlanVersionRow } from './types.js';

/**
 * Price books (docs/plans.md "Price books"): a plan version is in a currency when every item's product has a price
 * in it (its own or a currency option); its items' minimum_amount and per-dimension prices are amounts in the plan's
 * own currency, so such an item is in that currency only. Subscribing a customer in another currency → 422
 * currency_not_priced naming the currency and each item that has no price in it.
 */
export async function checkPlanPricedIn(client: PgClient, version: PlanVersionRow, currency: string): Promise<void> {
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
          field: 'plan_id',
          message: `${at} has no price in ${currency}: items[${i}] (product ${item.product_id}) is priced in ${product ? productCurrencies(product).join(', ') : 'no currency'}`,
        },
      ];
    const ownAmounts = [
      item.minimum_amount !== null ? 'minimum_amount' : null,
      item.dimension_prices ? 'prices' : null,
    ].filter((x) => x !== null);
    return ownAmounts.map((f) => ({
      field: 'plan_id',
      message: `${at} has no price in ${currency}: items[${i}].${f} is in ${version.currency} only`,
    }));
  });
  if (errors.length) throw new ValidationError(errors, undefined, 'currency_not_priced');
}
