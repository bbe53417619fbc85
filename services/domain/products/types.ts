import type { Tier } from '../pricing/price-models.js';
import type { Pricing, TiersMode } from '../../../shared/vocabulary.js';
import type { ProductPriceRow } from '../pricing/price-models.js';

export interface NewProduct {
  name: string;
  /** Exact decimal text, as the client wrote it ("0" for tiered products: the tiers carry the prices). */
  price: string;
  currency: string;
  pricing: Pricing;
  tiers_mode?: TiersMode;
  tiers?: Tier[];
  package_size?: string;
  tax_rate_ids?: string[];
}

export interface ProductChange {
  name?: string;
  price?: string;
  tax_rate_ids?: string[];
}

export interface ProductRow extends ProductPriceRow {
  id: string;
  name: string;
  /** NUMERIC as text: exact. */
  price: string;
  currency: string;
  pricing: Pricing;
  tax_rate_ids: string[];
  created_at: Date;
  updated_at: Date;
}
