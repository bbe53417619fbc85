import type { BillingAddress } from '../billing-info/types.js';

/** A customer (docs/design.md §6, operator mode) as stored: an account, named by the operator's external id. */
export interface NewCustomer {
  name: string;
  externalId: string | null;
  email: string | null;
  billingAddress: BillingAddress | null;
  metadata: Record<string, string>;
}

/** A PATCH: absent fields stay; `null` clears. */
export interface CustomerChange {
  name?: string;
  externalId?: string | null;
  email?: string | null;
  billingAddress?: BillingAddress | null;
  metadata?: Record<string, string>;
}

export interface CustomerRow {
  account_id: string;
  customer_id: string;
  external_id: string | null;
  name: string;
  email: string | null;
  metadata: Record<string, string>;
  created_at: Date;
  line1: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
}

/** A sign-in: a user of a customer's account (the console and OAuth apps). */
export interface NewSignIn {
  email: string;
  /** Absent: the store generates one and returns it once. */
  password?: string;
}

export interface SignInRow {
  id: string;
  customer_id: string;
  email: string;
  created_at: Date;
}
