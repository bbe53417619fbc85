import type { CheckoutSessionRow } from '../../domain/checkout/types.js';
import { checkoutStatus } from '../../domain/checkout/types.js';

/** A checkout session as the API shows it (shared/api/checkout.ts); `url` from services/domain/checkout/links.ts. */
export function toCheckoutSession(s: CheckoutSessionRow, url: string, customerId: string | null, now = new Date()) {
  return {
    id: s.id,
    url,
    status: checkoutStatus(s, now),
    expires_at: s.expires_at.toISOString(),
    plan_id: s.plan_id,
    plan_version: s.plan_version,
    customer_id: customerId,
    customer_email: s.customer_email,
    success_url: s.success_url,
    cancel_url: s.cancel_url,
    trial_days: s.trial_days,
    coupon_id: s.coupon_id,
    allow_promotion_codes: s.allow_promotion_codes,
    subscription_id: s.subscription_id,
    promotion_code_id: s.promotion_code_id,
    completed_at: s.completed_at ? s.completed_at.toISOString() : null,
    created_at: s.created_at.toISOString(),
  };
}
