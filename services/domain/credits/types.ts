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
