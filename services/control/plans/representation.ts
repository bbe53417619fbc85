import { itemOut } from '../../domain/subscriptions/types.js';
import type { PlanVersionRow } from '../../domain/plans/types.js';

/** A plan version as the API shows it (shared/api/plans.ts): its items as a subscription's. */
export function toPlan(v: PlanVersionRow) {
  return {
    id: v.plan_id,
    name: v.name,
    currency: v.currency,
    interval: v.interval,
    interval_count: v.interval_count,
    version: v.version,
    items: v.items.map(itemOut),
    trial_days: v.trial_days,
    created_at: v.created_at.toISOString(),
  };
}
