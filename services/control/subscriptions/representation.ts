import { JsonDecimal } from '../../../shared/money/json.js';
import { currentPeriod } from '../../domain/subscriptions/periods.js';
import { collectionPaused, itemOut, type Subscription } from '../../domain/subscriptions/types.js';
import type { CurrentDiscount } from '../../domain/coupons/types.js';
import { toDiscount } from '../coupons/representation.js';

/** The API representation (shared/api/subscriptions.ts) of the domain's rows. */

/**
 * `discount`: the subscription's current coupon (services/domain/coupons/redeem.ts currentDiscounts); `customerId`:
 * the cus_ id of its account (customerIdsOfAccounts).
 */
export function toSubscription(s: Subscription, now: Date, discount: CurrentDiscount | null, customerId: string) {
  const period = currentPeriod(s.row, now);
  return {
    id: s.row.id,
    customer_id: customerId,
    status: s.row.status,
    items: s.items.map(itemOut),
    currency: s.row.currency,
    billing_threshold: s.row.billing_threshold === null ? null : { amount: new JsonDecimal(s.row.billing_threshold) },
    plan_id: s.row.plan_id,
    plan_version: s.row.plan_version,
    interval: s.row.interval,
    interval_count: s.row.interval_count,
    billing_anchor: s.row.billing_anchor,
    trial_end: s.row.trial_end?.toISOString() ?? null,
    current_period_start: period.start.toISOString(),
    current_period_end: period.end.toISOString(),
    scheduled_plan_change:
      s.row.pending_plan_version === null || s.row.pending_plan_at === null
        ? null
        : {
            plan_id: s.row.pending_plan_id ?? s.row.plan_id,
            plan_version: s.row.pending_plan_version,
            at: s.row.pending_plan_at.toISOString(),
          },
    pause_collection: collectionPaused(s.row)
      ? { behavior: 'void' as const, paused_at: s.row.collection_paused_at!.toISOString() }
      : null,
    cancel_at_period_end: s.row.status === 'active' && s.row.cancel_at !== null,
    cancel_at: s.row.status === 'active' ? (s.row.cancel_at?.toISOString() ?? null) : null,
    canceled_at: s.row.canceled_at?.toISOString() ?? null,
    created_at: s.row.created_at.toISOString(),
    managed_by: s.row.operator_managed ? ('operator' as const) : ('customer' as const),
    discount: toDiscount(discount),
  };
}
