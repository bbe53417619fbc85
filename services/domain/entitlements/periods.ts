import type { EntitlementPeriod } from '../../../shared/vocabulary.js';
import { monthStart, nextMonthStart, type Period } from '../subscriptions/periods.js';

const DAY_MS = 86_400_000;

/**
 * The period of a metered entitlement containing `now` (the customer's time: its test clock's, else real time).
 * `billing_period` is the calendar month in UTC containing `now` — the period of a subscription on the default terms
 * (month/1/calendar, services/domain/subscriptions/periods.ts) — with or without a subscription. A subscription on other
 * terms (weeks, anniversaries, years) still counts its entitlements per calendar month: the api checks entitlements
 * from memory, without the subscriptions; this is the one place to follow them. `day`: the UTC day.
 */
export function entitlementPeriod(period: EntitlementPeriod, now: Date): Period {
  if (period === 'day') {
    const start = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    return { start, end: new Date(start.getTime() + DAY_MS) };
  }
  const start = monthStart(now);
  return { start, end: nextMonthStart(start) };
}
