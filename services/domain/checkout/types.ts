/** A checkout session as stored (infra/migrations/postgres/821_checkout_sessions.sql). */
export interface CheckoutSessionRow {
  id: string;
  plan_id: string;
  plan_version: number | null;
  account_id: string | null;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  trial_days: number | null;
  coupon_id: string | null;
  allow_promotion_codes: boolean;
  status: 'open' | 'complete';
  subscription_id: string | null;
  promotion_code_id: string | null;
  expires_at: Date;
  completed_at: Date | null;
  created_at: Date;
}

export type NewCheckoutSession = Pick<
  CheckoutSessionRow,
  | 'plan_id'
  | 'plan_version'
  | 'account_id'
  | 'customer_email'
  | 'success_url'
  | 'cancel_url'
  | 'trial_days'
  | 'coupon_id'
  | 'allow_promotion_codes'
  | 'expires_at'
>;

/** What the API and the page call a session's state: an open session past its expiry is expired. */
export type CheckoutStatus = 'open' | 'complete' | 'expired';

export function checkoutStatus(s: Pick<CheckoutSessionRow, 'status' | 'expires_at'>, now: Date): CheckoutStatus {
  if (s.status === 'complete') return 'complete';
  return s.expires_at.getTime() <= now.getTime() ? 'expired' : 'open';
}
