import { JsonDecimal } from '../../../shared/money/json.js';
import { currentPeriod } from '../../domain/subscriptions/periods.js';
import { itemOut, type Subscription } from '../../domain/subscriptions/types.js';
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
    created_at: s.row.created_at.toISOString(),
    managed_by: s.row.operator_managed ? ('operator' as const) : ('customer' as const),
    discount: toDiscount(discount),
  };
}
