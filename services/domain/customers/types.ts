import type { BillingAddress } from '../billing-info/types.js';
import type { LegalAddress, TaxId } from '../tax/types.js';
import type { TaxExempt } from '../../../shared/vocabulary.js';
import type { Locale } from '../invoices/invoice-texts.js';

/** A customer's legal details and terms (docs/billing.md "Tax"); in a change, absent fields stay and `null` clears. */
export interface LegalDetails {
  legalName?: string | null;
  address?: LegalAddress | null;
  taxIds?: TaxId[];
  taxExempt?: TaxExempt;
  netTermsDays?: number;
  /** The language of its billing documents (services/domain/invoices/invoice-texts.ts). */
  locale?: Locale;
}

/** A customer (docs/design.md §6, operator mode) as stored: an account, named by the operator's external id. */
export interface NewCustomer {
  name: string;
  externalId: string | null;
  email: string | null;
  billingAddress: BillingAddress | null;
  metadata: Record<string, string>;
  legal: LegalDetails;
  /** Price books: the currency its subscriptions are priced in (absent: fixed by the first subscription). */
  currency?: string;
}

/** A PATCH: absent fields stay; `null` clears. */
export interface CustomerChange {
  name?: string;
  externalId?: string | null;
  email?: string | null;
  billingAddress?: BillingAddress | null;
  metadata?: Record<string, string>;
  legal: LegalDetails;
  /** Another currency only while it has no subscription (customers/currency-store.ts). */
  currency?: string;
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
  legal_name: string | null;
  address: LegalAddress | null;
  tax_ids: TaxId[];
  tax_exempt: TaxExempt;
  net_terms_days: number;
  locale: Locale;
  /** Price books: null until set or fixed by its first subscription. */
  currency: string | null;
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
