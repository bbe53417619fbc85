import type { PriceModel } from './price-models.js';
import type { ProductCurrencyOptions } from './price-books.js';

/**
 * Per-dimension prices (issue 46, docs/billing.md "Per-dimension prices"): one meter priced by the value of one of
 * its records' dimensions — tokens of `model=large` at one model, `model=small` at another. The item's usage is
 * read per value (as `group_by: [dimension]` reads it) and every value is priced by its own model on its own
 * (tiers and packages count per value). A value without a price of its own is billed at `default_price`; with no
 * default it is UNPRICED: still one line with its quantity, amount 0, "unpriced" in its description — usage is
 * never silently dropped, and the operator sees what to price.
 */
export interface DimensionPrice {
  /** A dimension value as records carry it (1–256 characters). */
  value: string;
  price: DimensionPriceModel;
}

/**
 * A per-dimension price's model. On a plan's item it may carry prices in other currencies than the plan's, as a
 * product's `currency_options` (price books, services/domain/plans/price-books.ts); a subscription's item never
 * does: its amounts are in the subscription's currency, resolved when it subscribed.
 */
export type DimensionPriceModel = PriceModel & { currency_options?: ProductCurrencyOptions };

export interface DimensionPrices {
  /** The dimension key whose value chooses the price. */
  dimension: string;
  prices: DimensionPrice[];
  /** Values with no price of their own, and records without the dimension; null: such usage is unpriced. */
  default_price: DimensionPriceModel | null;
}

/** The model a line of an unpriced value is priced with: every unit at 0. */
export const UNPRICED: PriceModel = { pricing: 'metered', price: '0' };

/** THE rule of which model prices a dimension value's usage: its own price, else default_price; null: unpriced. */
export function priceForValue(dp: DimensionPrices, value: string | null): PriceModel | null {
  const own = value === null ? undefined : dp.prices.find((p) => p.value === value);
  return own?.price ?? dp.default_price;
}

/** The dimension keys an item's usage is read and billed by: its group_by, or its priced dimension. */
export function billedGroupBy(item: { group_by?: string[]; dimension_prices?: DimensionPrices | null }): string[] {
  return item.dimension_prices ? [item.dimension_prices.dimension] : (item.group_by ?? []);
}
