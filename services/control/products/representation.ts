import { JsonDecimal } from '../../../shared/money/json.js';
import { priceModelOf } from '../../domain/pricing/price-models.js';
import type { ProductRow } from '../../domain/products/types.js';
import type { ProductCurrencyOptions } from '../../domain/pricing/price-books.js';

/** The API representation; `price` is written as a JSON number from its exact decimal text. */
export function toProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    price: new JsonDecimal(row.price),
    currency: row.currency,
    pricing: row.pricing,
    ...priceModelFields(row),
    currency_options: currencyOptionsOut(row.currency_options),
    tax_rate_ids: row.tax_rate_ids,
    allow_customer_meters: row.allow_customer_meters,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The fields of a tiered or package product's model, as exact JSON numbers (none for flat and metered). */
function priceModelFields(row: ProductRow) {
  const model = priceModelOf(row);
  if (model.pricing === 'package') return { package_size: new JsonDecimal(model.package_size) };
  if (model.pricing !== 'tiered') return {};
  return {
    tiers_mode: model.tiers_mode,
    tiers: model.tiers.map((t) => ({
      up_to: t.up_to === null ? null : new JsonDecimal(t.up_to),
      unit_price: new JsonDecimal(t.unit_price),
      flat_price: new JsonDecimal(t.flat_price),
    })),
  };
}

/** Price books (a product's, a plan item's per-dimension price's), amounts as exact JSON numbers. */
export function currencyOptionsOut(options: ProductCurrencyOptions | undefined) {
  return Object.fromEntries(
    Object.entries(options ?? {}).map(([code, o]) => [
      code,
      'tiers' in o
        ? {
            tiers: o.tiers.map((t) => ({
              up_to: t.up_to === null ? null : new JsonDecimal(t.up_to),
              unit_price: new JsonDecimal(t.unit_price),
              flat_price: new JsonDecimal(t.flat_price),
            })),
          }
        : { price: new JsonDecimal(o.price) },
    ]),
  );
}
