import { JsonDecimal } from '../../../shared/money/json.js';
import type { PriceModel } from './price-models.js';

/**
 * A price model on the wire (an item's per-dimension prices, shared/api/subscriptions.ts PriceModelSchema): its
 * pricing and the fields of that model only, every amount an exact JSON number.
 */
export function priceModelOut(model: PriceModel) {
  if (model.pricing === 'tiered')
    return {
      pricing: model.pricing,
      tiers_mode: model.tiers_mode,
      tiers: model.tiers.map((t) => ({
        up_to: t.up_to === null ? null : new JsonDecimal(t.up_to),
        unit_price: new JsonDecimal(t.unit_price),
        flat_price: new JsonDecimal(t.flat_price),
      })),
    };
  if (model.pricing === 'package')
    return {
      pricing: model.pricing,
      price: new JsonDecimal(model.price),
      package_size: new JsonDecimal(model.package_size),
    };
  return { pricing: model.pricing, price: new JsonDecimal(model.price) };
}
