-- Invoices: one per subscription and billing period, written by the billing run (period close) and read by
-- /v1/billing/invoices. An invoice is a financial document: it keeps the customer id, currency, prices and
-- descriptions as they were when it was issued, whatever later happens to products or subscriptions.
-- Money is exact NUMERIC (amounts already rounded to the currency's minor unit by the billing run).
CREATE TABLE invoices (
  id              text PRIMARY KEY,                                   -- inv_…
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  customer_id     text NOT NULL REFERENCES accounts(customer_id),     -- the account's cus_ id, as printed
  subscription_id text NOT NULL REFERENCES subscriptions(id),
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'uncollectible', 'void')),
  currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),      -- ISO 4217, upper case
  amount          numeric NOT NULL CHECK (amount >= 0),               -- = sum of its lines' amounts
  period_start    date NOT NULL,                                      -- UTC days, both inclusive
  period_end      date NOT NULL,
  attempt_count   integer NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),  -- payment attempts so far
  created_at      timestamptz NOT NULL DEFAULT now(),
  paid_at         timestamptz,
  CHECK (period_end >= period_start),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
  -- Billing runs are idempotent: re-running one for a closed period finds this row instead of a second invoice.
  UNIQUE (subscription_id, period_start)
);
-- Lists: the account's invoices newest first (ties by id), optionally of one status.
CREATE INDEX invoices_account_newest ON invoices (account_id, created_at DESC, id DESC);
CREATE INDEX invoices_account_status_newest ON invoices (account_id, status, created_at DESC, id DESC);

-- Lines in printed order. meter_id is set for metered products (quantity = the meter's usage in the period),
-- NULL for flat ones (quantity 1). amount = quantity × unit_price rounded to the currency's minor unit.
-- quantity and amount have no sign check: a gauge meter's value may be negative.
CREATE TABLE invoice_lines (
  invoice_id  text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
  position    integer NOT NULL CHECK (position >= 0),
  product_id  text NOT NULL REFERENCES products(id),
  meter_id    text REFERENCES meters(id),
  description text NOT NULL,
  quantity    numeric NOT NULL,
  unit_price  numeric(38, 9) NOT NULL CHECK (unit_price >= 0),
  amount      numeric NOT NULL,
  PRIMARY KEY (invoice_id, position)
);
