-- Hosted invoice and card pages (issue 43, docs/payments.md "Hosted pages"). Expands only: new tables.

-- An invoice's hosted link is an HMAC of (invoice, generation) under a key derived from SECRET_KEY: it is never
-- stored, so a copy of the database cannot open one. A row exists only once an operator revoked or rotated the
-- link: rotating moves to the next generation (every earlier link stops working), revoking turns it off.
CREATE TABLE hosted_invoice_links (
  invoice_id  text PRIMARY KEY REFERENCES invoices(id) ON DELETE CASCADE,
  generation  integer NOT NULL DEFAULT 0 CHECK (generation >= 0),
  revoked_at  timestamptz,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Links to a customer's hosted "update payment method" page: a random 256-bit token, of which only its SHA-256 is
-- kept (the link is shown once, when it is made). A new link of the same customer revokes the earlier ones.
CREATE TABLE hosted_card_links (
  id          text PRIMARY KEY,                                       -- hcl_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  token_hash  bytea NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX hosted_card_links_account ON hosted_card_links (account_id) WHERE revoked_at IS NULL;
