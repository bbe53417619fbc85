import type { Tier } from '../pricing/price-models.js';
import type { Pricing, TiersMode } from '../../../shared/vocabulary.js';
import type { ProductPriceRow } from '../pricing/price-models.js';
import type { ProductCurrencyOptions } from '../pricing/price-books.js';

export interface NewProduct {
  name: string;
  /** Exact decimal text, as the client wrote it ("0" for tiered products: the tiers carry the prices). */
  price: string;
  currency: string;
  pricing: Pricing;
  tiers_mode?: TiersMode;
  tiers?: Tier[];
  package_size?: string;
  /** Price books (services/domain/pricing/price-books.ts): the price in other currencies. */
  currency_options?: ProductCurrencyOptions;
  tax_rate_ids?: string[];
  /** Default true: a customer's own meter may price it (docs/operator-mode.md). */
  allow_customer_meters?: boolean;
}

export interface ProductChange {
  name?: string;
  price?: string;
  /** Added or replaced per currency; the others stay. */
  currency_options?: ProductCurrencyOptions;
  tax_rate_ids?: string[];
  allow_customer_meters?: boolean;
}

export interface ProductRow extends ProductPriceRow {
  id: string;
  name: string;
  /** NUMERIC as text: exact. */
  price: string;
  currency: string;
  pricing: Pricing;
  currency_options: ProductCurrencyOptions;
  tax_rate_ids: string[];
  allow_customer_meters: boolean;
  created_at: Date;
  updated_at: Date;
}
