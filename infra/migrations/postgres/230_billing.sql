-- Billing address and payment methods of an account. Card numbers and CVCs are never stored: a payment
-- method keeps brand, last four digits, expiry, a keyed HMAC fingerprint of the number (to recognise the
-- same card without being able to recover it) and the processor's opaque token, which is what a charge uses.
CREATE TABLE billing_addresses (
  account_id text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  line1      text NOT NULL,
  city       text NOT NULL,
  state      text NOT NULL,
  zip        text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payment_methods (
  id              text PRIMARY KEY,              -- pm_…
  seq             bigserial UNIQUE,              -- insertion order: lists are newest first
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  type            text NOT NULL CHECK (type = 'card'),
  brand           text NOT NULL,
  last4           text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
  exp_month       integer NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
  exp_year        integer NOT NULL,
  fingerprint     text NOT NULL,                 -- HMAC-SHA256(number) under a key derived from SECRET_KEY
  processor       text NOT NULL,                 -- which PaymentProcessor issued the token ('sandbox')
  processor_token text NOT NULL,                 -- opaque reference at the processor (Stripe's PaymentMethod id)
  is_default      boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_methods_account ON payment_methods (account_id, seq DESC);
-- Exactly one default per account (the code keeps "at least one" once a card exists).
CREATE UNIQUE INDEX payment_methods_one_default ON payment_methods (account_id) WHERE is_default;
