/** Prepaid credit grants (docs/design.md §8 Credits), as stored. */

export interface NewCreditGrant {
  /** Exactly one of the two names the account credited. */
  accountId?: string;
  customerId?: string;
  /** Exact decimal text. */
  amount: string;
  currency: string;
  expiresAt: Date | null;
  description: string;
}

export interface CreditGrantRow {
  id: string;
  account_id: string;
  amount: string;
  remaining: string;
  currency: string;
  expires_at: Date | null;
  description: string;
  created_at: Date;
}

/** A grant with credit left to spend, as billing spends it (services/domain/billing/credits.ts). */
export interface SpendableGrant {
  id: string;
  account_id: string;
  currency: string;
  remaining: string;
  expires_at: Date | null;
  created_at: Date;
}

/** A purchase of prepaid credit (docs/credits.md "Prepaid credit"): a top-up invoice, granted when paid. */
export type TopUpTrigger = 'manual' | 'auto_recharge';
export type TopUpStatus = 'pending' | 'paid' | 'failed';

export interface TopUpRow {
  id: string;
  account_id: string;
  customer_id: string;
  invoice_id: string;
  currency: string;
  amount: string;
  status: TopUpStatus;
  failure_code: string | null;
  trigger: TopUpTrigger;
  /** The grant the paid invoice made (null until paid). */
  grant_id: string | null;
  created_at: Date;
  completed_at: Date | null;
}
