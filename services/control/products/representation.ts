import { JsonDecimal } from '../../../shared/money/json.js';
import { priceModelOf } from '../../domain/pricing/price-models.js';
import type { ProductRow } from '../../domain/products/types.js';

/** The API representation; `price` is written as a JSON number from its exact decimal text. */
export function toProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    price: new JsonDecimal(row.price),
    currency: row.currency,
    pricing: row.pricing,
    ...priceModelFields(row),
    currency_options: currencyOptionsOut(row),
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

/** The price books, amounts as exact JSON numbers. */
function currencyOptionsOut(row: ProductRow) {
  return Object.fromEntries(
    Object.entries(row.currency_options ?? {}).map(([code, o]) => [
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
