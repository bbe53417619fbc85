import type { BillingInterval } from '../../../shared/vocabulary.js';
import type { PlanVersionRow } from './types.js';
import type { SubscriptionTerms } from '../subscriptions/types.js';
import { ValidationError } from '../../../shared/errors.js';

/** The subscription terms a plan version gives: its billing interval and how long a new subscriber's trial is. */
export interface PlanTerms {
  interval: BillingInterval;
  interval_count: number;
  trial_days: number;
}

/**
 * What a subscription made from this version takes besides its items (one place: the subscription's periods and
 * trial follow it — interval and interval_count become the subscription's, trial_days its trial_end).
 */
export function planTerms(v: Pick<PlanVersionRow, 'interval' | 'interval_count' | 'trial_days'>): PlanTerms {
  return { interval: v.interval, interval_count: v.interval_count, trial_days: v.trial_days };
}

/**
 * A plan subscription's terms: the interval is the plan's (a request may not change it); the anchor is the
 * request's; the trial is the request's trial_end or trial_days if it gives one, else the plan's trial_days.
 */
export function subscriptionTermsOfPlan(plan: PlanTerms, requested: SubscriptionTerms): SubscriptionTerms {
  for (const field of ['interval', 'interval_count'] as const)
    if (requested[field] !== undefined)
      throw new ValidationError([{ field, message: 'comes from the plan: not allowed with plan_id' }]);
  const ownTrial = requested.trial_end !== undefined || requested.trial_days !== undefined;
  return {
    interval: plan.interval,
    interval_count: plan.interval_count,
    billing_anchor: requested.billing_anchor,
    trial_end: requested.trial_end,
    trial_days: ownTrial ? requested.trial_days : plan.trial_days > 0 ? plan.trial_days : undefined,
  };
}
