import type { CustomerRow, SignInRow } from '../../domain/customers/types.js';

/** A customer as the API shows it (`id` is the `cus_` id, `account_id` the account). */
export function toCustomer(row: CustomerRow) {
  return {
    id: row.customer_id,
    account_id: row.account_id,
    external_id: row.external_id,
    name: row.name,
    email: row.email,
    billing_address:
      row.line1 !== null ? { line1: row.line1, city: row.city!, state: row.state!, zip: row.zip! } : null,
    metadata: row.metadata,
    legal_name: row.legal_name,
    address: row.address,
    tax_ids: row.tax_ids,
    tax_exempt: row.tax_exempt,
    net_terms_days: row.net_terms_days,
    locale: row.locale,
    currency: row.currency,
    created_at: row.created_at.toISOString(),
  };
}

/** A sign-in as the API shows it; the password only when it was generated, in the 201 body. */
export function toSignIn(row: SignInRow, generatedPassword?: string) {
  return {
    id: row.id,
    customer_id: row.customer_id,
    email: row.email,
    ...(generatedPassword ? { password: generatedPassword } : {}),
    created_at: row.created_at.toISOString(),
  };
}
