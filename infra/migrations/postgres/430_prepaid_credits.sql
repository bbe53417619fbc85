-- Prepaid credits (docs/design.md §8 Credits). An operator grants an account an amount in a currency; the
-- billing run applies it to the account's invoices at creation, oldest-expiring first, as a negative `credit`
-- line. `remaining` only ever decreases, under the row lock of the close transaction that spends it, so
-- concurrent runs never spend the same credit twice; the CHECKs are the last line of defence.
-- Grants: the owner's default privileges give meterline_app these tables (infra/stack/postgres.ts).
CREATE TABLE credit_grants (
  id          text PRIMARY KEY,                                  -- cred_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  amount      numeric NOT NULL CHECK (amount > 0),
  remaining   numeric NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  expires_at  timestamptz,                                       -- NULL: never
  description text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_grants_account_newest ON credit_grants (account_id, created_at DESC, id DESC);
CREATE INDEX credit_grants_spendable ON credit_grants (account_id) WHERE remaining > 0;

-- The ledger: how much of which grant each invoice used (its credit line is the sum).
CREATE TABLE credit_applications (
  grant_id   text NOT NULL REFERENCES credit_grants(id) ON DELETE CASCADE,
  invoice_id text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
  amount     numeric NOT NULL CHECK (amount > 0),
  PRIMARY KEY (grant_id, invoice_id)
);
CREATE INDEX credit_applications_invoice ON credit_applications (invoice_id);
