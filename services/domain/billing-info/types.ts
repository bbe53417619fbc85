/** The billing information of an account (GET /v1/billing): its customer, default card and billing address. */

/** The postal address printed on invoices and credit notes. */
export interface BillingAddress {
  line1: string;
  city: string;
  state: string;
  zip: string;
}

export interface BillingInfo {
  customer_id: string;
  payment_method: { id: string; type: 'card'; last4: string; brand: string } | null;
  billing_address: BillingAddress | null;
}
