import { JsonDecimal } from '../../../shared/money/json.js';
import type { BillingAnchor, BillingInterval } from '../../../shared/vocabulary.js';
import type { DimensionPrices } from '../pricing/dimension-prices.js';
import type { MinimumCurrencyOptions } from '../pricing/price-books.js';
import { priceModelOut } from '../pricing/price-model-out.js';

/** Subscriptions (docs/design.md §8 Subscription): a subscription and its items, as stored. */

/** An item as the routes pass it on (after validation): the minimum as the exact decimal text the client wrote. */
export interface ItemRequest {
  product_id: string;
  meter_id?: string | null;
  minimum_amount?: string;
  group_by?: string[];
  /** Per-dimension prices (issue 46), their amounts as the exact decimal text the client wrote. */
  dimension_prices?: DimensionPrices;
  /** A plan's item only: its minimum_amount in other currencies than the plan's (price books). */
  currency_options?: MinimumCurrencyOptions;
  quantity?: number;
}

export interface SubscriptionRow {
  id: string;
  account_id: string;
  status: 'active' | 'canceled';
  currency: string;
  created_at: Date;
  updated_at: Date;
  canceled_at: Date | null;
  /** Cancel at the period's end (migration 800): the instant the billing run cancels it; null: none scheduled. */
  cancel_at: Date | null;
  /** Pause collection (migration 801): paused since, and last resumed at (see pausedAt in periods.ts). */
  collection_paused_at: Date | null;
  collection_resumed_at: Date | null;
  /** Progressive billing: NUMERIC as exact text, or null (docs/billing.md "Progressive billing"). */
  billing_threshold: string | null;
  /** The plan version its items came from (docs/plans.md), or null. */
  plan_id: string | null;
  plan_version: number | null;
  /** A plan migration `at: period_end` not yet applied: the version, and the instant it takes effect. */
  pending_plan_version: number | null;
  /** The plan of pending_plan_version; null: the subscription's own (migration 811). */
  pending_plan_id: string | null;
  pending_plan_at: Date | null;
  /** Billing periods (services/domain/subscriptions/periods.ts, migration 665). */
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  /** Nothing is billed before it (docs/billing.md "Trials"); null: no trial. */
  trial_end: Date | null;
  /** Made by the operator (an admin token): only it changes the terms, or the customer as portal settings allow. */
  operator_managed: boolean;
}

/**
 * A subscription's billing terms at creation (all optional: month, 1, calendar, no trial). A plan's interval,
 * interval_count and trial_days map onto these; trial_end and trial_days exclude each other.
 */
export interface SubscriptionTerms {
  interval?: BillingInterval;
  interval_count?: number;
  billing_anchor?: BillingAnchor;
  trial_end?: Date;
  trial_days?: number;
}

export interface Item {
  product_id: string;
  meter_id: string | null;
  /** Exact decimal text, or null: no minimum commitment. */
  minimum_amount: string | null;
  /** Dimension keys billed per group; empty: one line for the whole meter. */
  group_by: string[];
  /** Per-dimension prices (services/domain/pricing/dimension-prices.ts); null: the product's price model. Plan versions written before issue 46 lack it. */
  dimension_prices?: DimensionPrices | null;
  /** A plan version's item only: its minimum_amount in other currencies than the plan's (price books); absent: none. */
  currency_options?: MinimumCurrencyOptions;
  /** Units of a flat product (1 for usage-priced ones). */
  quantity: number;
}

export interface Subscription {
  row: SubscriptionRow;
  items: Item[];
}

/** An item on the wire (subscription representation and `subscription.updated`): the minimum and group_by only when set, the quantity when not 1. */
export function itemOut(i: Item) {
  return {
    product_id: i.product_id,
    meter_id: i.meter_id,
    ...(i.minimum_amount === null ? {} : { minimum_amount: new JsonDecimal(i.minimum_amount) }),
    ...(i.group_by.length ? { group_by: i.group_by } : {}),
    ...(i.dimension_prices
      ? {
          dimension: i.dimension_prices.dimension,
          prices: i.dimension_prices.prices.map((p) => ({ value: p.value, price: priceModelOut(p.price) })),
          default_price: i.dimension_prices.default_price && priceModelOut(i.dimension_prices.default_price),
        }
      : {}),
    ...(i.quantity === 1 ? {} : { quantity: i.quantity }),
  };
}

/** Collection paused now (pause_collection): paused, and not resumed since. */
export function collectionPaused(
  row: Pick<SubscriptionRow, 'collection_paused_at' | 'collection_resumed_at'>,
): boolean {
  return row.collection_paused_at !== null && row.collection_resumed_at === null;
}
