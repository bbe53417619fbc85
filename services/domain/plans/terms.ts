import type { PlanInterval } from '../../../shared/vocabulary.js';
import type { PlanVersionRow } from './types.js';

/** The subscription terms a plan version gives: its billing interval and how long a new subscriber's trial is. */
export interface PlanTerms {
  interval: PlanInterval;
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
