import type { EntitlementOverage, EntitlementPeriod, EntitlementType } from '../../../shared/vocabulary.js';

/** An entitlement as stored (docs/entitlements.md). Metered fields are null on a boolean one. */
export interface EntitlementRow {
  id: string;
  account_id: string;
  /** The customer's `cus_` id (joined from accounts). */
  customer_id: string;
  feature: string;
  type: EntitlementType;
  meter_id: string | null;
  /** Exact decimal text. */
  limit: string | null;
  period: EntitlementPeriod | null;
  overage: EntitlementOverage | null;
  /** Issue 46: only the usage of this dimension value counts; null: the meter's whole usage. */
  dimension_key: string | null;
  dimension_value: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewEntitlement =
  | { accountId: string; feature: string; type: 'boolean' }
  | {
      accountId: string;
      feature: string;
      type: 'metered';
      meterId: string;
      limit: string;
      period: EntitlementPeriod;
      overage: EntitlementOverage;
      dimension?: { key: string; value: string };
    };

/** A PATCH: the fields given (absent: unchanged). */
export interface EntitlementChange {
  limit?: string;
  period?: EntitlementPeriod;
  overage?: EntitlementOverage;
}

export interface GrantRow {
  id: string;
  entitlement_id: string;
  amount: string;
  /** The customer's time when granted: the grant adds to the period containing it. */
  granted_at: Date;
  expires_at: Date | null;
  created_at: Date;
}

export interface NewGrant {
  amount: string;
  expiresAt: Date | null;
}
