import type { BillingInterval } from '../../../shared/vocabulary.js';
import type { Item, ItemRequest } from '../subscriptions/types.js';

/** Plans (docs/plans.md): a plan of the deployment and its immutable versions, as stored. */
export interface PlanVersionRow {
  plan_id: string;
  version: number;
  name: string;
  currency: string;
  interval: BillingInterval;
  interval_count: number;
  /** The items a subscription to this version gets (validated as a subscription's items when written). */
  items: Item[];
  trial_days: number;
  created_at: Date;
}

/** A plan's first version, as the route passes it on (after the schema). */
export interface NewPlan {
  name: string;
  currency: string;
  interval: BillingInterval;
  interval_count: number;
  items: ItemRequest[];
  trial_days: number;
}

/** The fields a new version changes; the others are the latest version's. */
export type PlanVersionChange = Partial<Omit<NewPlan, 'currency'>>;
