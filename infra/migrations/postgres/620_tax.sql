-- Tax and legal details (issue 31). Grants: the owner's default privileges give meterline_app every table this
-- file creates (infra/stack/postgres.ts); ALTERed tables keep their grants. Expands only (docs/upgrades.md).

-- The deployment's tax rates (admin). A rate is never deleted, only archived: invoices name the rates they
-- were taxed at. country (ISO 3166-1 alpha-2) makes it a default for customers in that country (and region, if
-- set) whose product names no rates.
CREATE TABLE tax_rates (
  id          text PRIMARY KEY,                                                 -- txr_…
  name        text NOT NULL,
  percentage  numeric NOT NULL CHECK (percentage >= 0 AND percentage <= 100),
  country     text CHECK (country ~ '^[A-Z]{2}$'),
  region      text,
  inclusive   boolean NOT NULL,
  archived_at timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK (region IS NULL OR country IS NOT NULL)
);
CREATE INDEX tax_rates_newest ON tax_rates (created_at DESC, id DESC);

-- The rates a product's lines are taxed at (empty: the customer's country's default rates).
ALTER TABLE products ADD COLUMN tax_rate_ids text[] NOT NULL DEFAULT '{}';

-- A customer's legal details and terms (an account: docs/design.md §6).
ALTER TABLE accounts ADD COLUMN legal_name text;
ALTER TABLE accounts ADD COLUMN address jsonb;                                  -- {line1, line2?, city, postal_code, region?, country}
ALTER TABLE accounts ADD COLUMN tax_ids jsonb NOT NULL DEFAULT '[]';            -- [{type, value}]
ALTER TABLE accounts ADD COLUMN tax_exempt text NOT NULL DEFAULT 'none' CHECK (tax_exempt IN ('none', 'exempt', 'reverse'));
ALTER TABLE accounts ADD COLUMN net_terms_days integer NOT NULL DEFAULT 0 CHECK (net_terms_days >= 0 AND net_terms_days <= 365);

-- An invoice's totals and terms, fixed when it is created: subtotal (Σ of its charge lines, as priced), tax
-- (Σ of the tax at every rate, included or added), due_at (created + the customer's net_terms_days; dunning
-- counts from it), and the customer's tax_exempt then ('reverse' prints the reverse-charge note). NULL on
-- invoices written before this migration: read as subtotal = amount, due_at = created_at.
ALTER TABLE invoices ADD COLUMN subtotal numeric;
ALTER TABLE invoices ADD COLUMN tax numeric NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN due_at timestamptz;
ALTER TABLE invoices ADD COLUMN tax_exempt text CHECK (tax_exempt IN ('none', 'exempt', 'reverse'));

-- Tax lines (type 'tax'): tax_rate_id names the rate, tax_amount the tax at it; amount is what the line adds to
-- the total (the tax of an exclusive rate; 0 for an inclusive one, already inside the lines it taxes). Taxed
-- lines keep their tax per rate in `taxes` ([{tax_rate_id, amount}]): a credit note reverses it in proportion.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_type_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_type_check
  CHECK (type IN ('flat', 'usage', 'minimum_commitment', 'credit', 'adjustment', 'tax'));
ALTER TABLE invoice_lines ADD COLUMN tax_rate_id text REFERENCES tax_rates(id);
ALTER TABLE invoice_lines ADD COLUMN tax_amount numeric;
ALTER TABLE invoice_lines ADD COLUMN taxes jsonb;

-- What a credit note reversed of the invoice's tax (included in its amount).
ALTER TABLE credit_notes ADD COLUMN tax numeric NOT NULL DEFAULT 0;
-- A credit note line reversing tax: the invoice line whose tax it is (invoice_position is the tax line).
ALTER TABLE credit_note_lines ADD COLUMN tax_of_position integer CHECK (tax_of_position >= 0);
