import { JsonDecimal } from '../../../shared/money/json.js';
import type { DimensionPriceModel } from '../../domain/pricing/dimension-prices.js';
import { itemOut, type Item } from '../../domain/subscriptions/types.js';
import type { PlanVersionRow } from '../../domain/plans/types.js';
import { currencyOptionsOut } from '../products/representation.js';

/** A plan version as the API shows it (shared/api/plans.ts): its items as a subscription's, with their price books. */
export function toPlan(v: PlanVersionRow) {
  return {
    id: v.plan_id,
    name: v.name,
    currency: v.currency,
    interval: v.interval,
    interval_count: v.interval_count,
    version: v.version,
    items: v.items.map(planItemOut),
    trial_days: v.trial_days,
    created_at: v.created_at.toISOString(),
  };
}

/** Price books (docs/plans.md): the minimum's and each per-dimension price's, when the item has some. */
function planItemOut(i: Item) {
  const out = itemOut(i);
  const books = (m: DimensionPriceModel) =>
    m.currency_options ? { currency_options: currencyOptionsOut(m.currency_options) } : {};
  const dp = i.dimension_prices;
  return {
    ...out,
    ...(dp && out.prices
      ? { prices: out.prices.map((p, j) => ({ ...p, price: { ...p.price, ...books(dp.prices[j]!.price) } })) }
      : {}),
    ...(dp?.default_price && out.default_price
      ? { default_price: { ...out.default_price, ...books(dp.default_price) } }
      : {}),
    ...(i.currency_options
      ? {
          currency_options: Object.fromEntries(
            Object.entries(i.currency_options).map(([code, o]) => [
              code,
              { minimum_amount: new JsonDecimal(o.minimum_amount) },
            ]),
          ),
        }
      : {}),
  };
}
