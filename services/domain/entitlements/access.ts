import { Decimal } from '../../../shared/money/decimal.js';
import type { EntitlementOverage, EntitlementPeriod } from '../../../shared/vocabulary.js';
import type { Period } from '../subscriptions/periods.js';
import { entitlementPeriod } from './periods.js';
import type { GrantRow } from './types.js';

/** What a check answers (docs/entitlements.md); decimals exact, null where a boolean entitlement has none. */
export interface Access {
  has_access: boolean;
  usage: Decimal | null;
  limit: Decimal | null;
  balance: Decimal | null;
  period_start: Date | null;
  period_end: Date | null;
}

export interface MeteredTerms {
  limit: string;
  period: EntitlementPeriod;
  overage: EntitlementOverage;
}

/** A grant adds to the period containing its granted_at, while it has not expired (never into the next period). */
export function grantsInPeriod(grants: readonly GrantRow[], period: Period, now: Date): Decimal {
  let sum = new Decimal(0);
  for (const g of grants) {
    const t = g.granted_at.getTime();
    if (t < period.start.getTime() || t >= period.end.getTime()) continue;
    if (g.expires_at && g.expires_at.getTime() <= now.getTime()) continue;
    sum = sum.plus(g.amount);
  }
  return sum;
}

/**
 * THE rule of a metered entitlement (the api's check and the exhaustion evaluator both apply it): the period's
 * limit is the entitlement's limit plus the period's grants; balance = limit − usage (negative past it);
 * `block` gives access while usage < limit, `allow` always. Usage is never refused: this only answers.
 */
export function meteredAccess(terms: MeteredTerms, grants: readonly GrantRow[], usage: Decimal, now: Date): Access {
  const period = entitlementPeriod(terms.period, now);
  const limit = new Decimal(terms.limit).plus(grantsInPeriod(grants, period, now));
  return {
    has_access: terms.overage === 'allow' || usage.lessThan(limit),
    usage,
    limit,
    balance: limit.minus(usage),
    period_start: period.start,
    period_end: period.end,
  };
}

/** A boolean entitlement: access while it exists. */
export const BOOLEAN_ACCESS: Access = {
  has_access: true,
  usage: null,
  limit: null,
  balance: null,
  period_start: null,
  period_end: null,
};

/** No entitlement to the feature: no access. */
export const NO_ACCESS: Access = { ...BOOLEAN_ACCESS, has_access: false };

/** The metered terms of a stored metered entitlement. */
export function termsOf(e: {
  limit: string | null;
  period: EntitlementPeriod | null;
  overage: EntitlementOverage | null;
}): MeteredTerms {
  return { limit: e.limit!, period: e.period!, overage: e.overage! };
}
