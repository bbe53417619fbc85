import { JsonDecimal, stringifyJson } from '../../../shared/money/json.js';
import type { Access } from '../../domain/entitlements/access.js';
import type { EntitlementRow, GrantRow } from '../../domain/entitlements/types.js';

/** An entitlement as the API shows it: `customer_id` is the customer's `cus_` id, the limit an exact JSON number. */
export function toEntitlement(r: EntitlementRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    feature: r.feature,
    type: r.type,
    meter_id: r.meter_id,
    limit: r.limit === null ? null : new JsonDecimal(r.limit),
    period: r.period,
    overage: r.overage,
    ...(r.dimension_key === null ? {} : { dimension: { key: r.dimension_key, value: r.dimension_value! } }),
    created_at: r.created_at.toISOString(),
  };
}

export function toGrant(g: GrantRow) {
  return {
    id: g.id,
    entitlement_id: g.entitlement_id,
    amount: new JsonDecimal(g.amount),
    granted_at: g.granted_at.toISOString(),
    expires_at: g.expires_at?.toISOString() ?? null,
    created_at: g.created_at.toISOString(),
  };
}

const dec = (d: Access['usage']) => (d === null ? null : new JsonDecimal(d));
const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** A check's answer as JSON text (the check serves it from a cache: one text per usage refresh). */
export function checkAnswerText(feature: string, a: Access, noEntitlement = false): string {
  return stringifyJson({
    feature,
    has_access: a.has_access,
    ...(noEntitlement ? { reason: 'no_entitlement' } : {}),
    usage: dec(a.usage),
    limit: dec(a.limit),
    balance: dec(a.balance),
    period_start: iso(a.period_start),
    period_end: iso(a.period_end),
  });
}
