import type { TaxExempt } from '../../../shared/vocabulary.js';

/** A tax rate of the deployment (POST /v1/tax_rates); percentage as exact decimal text. */
export interface TaxRateRow {
  id: string;
  name: string;
  percentage: string;
  country: string | null;
  region: string | null;
  inclusive: boolean;
  archived_at: Date | null;
  created_at: Date;
}

export interface NewTaxRate {
  name: string;
  percentage: string;
  country: string | null;
  region: string | null;
  inclusive: boolean;
}

/** What decides a customer's tax: its exemption and where it is (its address's country and region). */
export interface TaxProfile {
  tax_exempt: TaxExempt;
  country: string | null;
  region: string | null;
}

/** A customer's legal address (invoices print it; its country selects the default tax rates). */
export interface LegalAddress {
  line1: string;
  line2?: string;
  city: string;
  postal_code: string;
  region?: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
}

export interface TaxId {
  type: string;
  value: string;
}
