import type { PriceModel, ProductPriceRow, Tier } from './price-models.js';
import { priceModelOf } from './price-models.js';

/* ---------------------------------------------------------------------------------------------------------
 * Price books (issue 46 item 2, docs/plans.md "Price books"): a product or an amount_off coupon priced in several
 * currencies, like Stripe's `currency_options`. Its `currency` is its first book; `currency_options` adds one per
 * other currency. The customer's currency picks the book (one subscription, one currency), so every reader of a
 * price asks these functions for the price IN a currency — never the row's `price` alone.
 * Why per product (and per coupon) rather than per plan version: a plan version's items name products, and the
 * products price them (a PATCH of a product's price reaches every subscription, plan or not); per-currency
 * amounts live where the amount lives, so a plan is in a currency exactly when each of its items' products is.
 * ------------------------------------------------------------------------------------------------------- */

/** A product's price in one other currency: the price (flat, metered, package) or the tiers (tiered). */
export type ProductCurrencyOption = { price: string } | { tiers: Tier[] };

/** ISO 4217 code → the option; stored as jsonb (migration 860), never with the product's own currency as a key. */
export type ProductCurrencyOptions = Record<string, ProductCurrencyOption>;

export interface ProductBooks extends ProductPriceRow {
  currency: string;
  currency_options: ProductCurrencyOptions;
}

/** Every currency a product is priced in: its own first, then its options in code order. */
export function productCurrencies(p: Pick<ProductBooks, 'currency' | 'currency_options'>): string[] {
  return [p.currency, ...Object.keys(p.currency_options ?? {}).sort()];
}

/** THE price of a product in `currency`: its own model there, or null when it has no price in that currency. */
export function productPriceIn(p: ProductBooks, currency: string): PriceModel | null {
  return priceModelIn(priceModelOf(p), p.currency, p.currency_options, currency);
}

/**
 * THE price of a model with books in `currency` (a product's, or a plan item's per-dimension price): the model
 * itself in its own currency, else the option's price (or tiers, for a tiered model) over the model's other fields
 * (package_size, tiers_mode); null when it has none there.
 */
export function priceModelIn(
  own: PriceModel,
  ownCurrency: string,
  options: ProductCurrencyOptions | undefined,
  currency: string,
): PriceModel | null {
  if (ownCurrency === currency) return own;
  const option = options?.[currency];
  if (!option) return null;
  if (own.pricing === 'tiered') return 'tiers' in option ? { ...own, tiers: option.tiers } : null;
  return 'price' in option ? { ...own, price: option.price } : null;
}

/**
 * A plan item's minimum commitment in other currencies than the plan's (migration-free: plan items are jsonb):
 * code → {minimum_amount}, as a coupon's `{amount_off}` — exact to each currency's minor unit.
 */
export type MinimumCurrencyOptions = Record<string, { minimum_amount: string }>;

/** A plan item's minimum in `currency`: its own in the plan's currency, else its option; null: none there. */
export function minimumIn(
  own: string,
  ownCurrency: string,
  options: MinimumCurrencyOptions | undefined,
  currency: string,
): string | null {
  if (ownCurrency === currency) return own;
  return options?.[currency]?.minimum_amount ?? null;
}

/** An amount_off coupon's amount in other currencies than its own: code → {amount_off}. */
export type CouponCurrencyOptions = Record<string, { amount_off: string }>;

export interface CouponBooks {
  percent_off: string | null;
  amount_off: string | null;
  currency: string | null;
  currency_options?: CouponCurrencyOptions | null;
}

/**
 * THE terms of a coupon for a subscription in `currency`: a percent_off coupon applies in every currency; an
 * amount_off one takes its amount in that currency (its own, or its option), or null: it has none there.
 */
export function couponTermsIn<T extends CouponBooks>(c: T, currency: string): T | null {
  if (c.percent_off !== null || c.currency === currency) return c;
  const option = c.currency_options?.[currency];
  return option ? { ...c, amount_off: option.amount_off, currency } : null;
}

/** Every currency an amount_off coupon takes an amount in (empty for percent_off: all of them). */
export function couponCurrencies(c: CouponBooks): string[] {
  if (c.currency === null) return [];
  return [c.currency, ...Object.keys(c.currency_options ?? {}).sort()];
}
