-- Stripe as the payment processor (issue 43, docs/payments.md). Grants: the owner's default privileges give
-- meterline_app every table this file creates (infra/stack/postgres.ts); ALTERed tables keep their grants. Expands
-- only: new tables, and payment_attempts' status check widened (every row valid before stays valid).

-- One Stripe Customer per meterline customer, made when first needed (with an idempotency key derived from the
-- account, so a retry never makes two).
CREATE TABLE stripe_customers (
  account_id  text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  customer_id text NOT NULL UNIQUE,                                   -- cus_…
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Stripe events already applied: a webhook delivered twice (or replayed) changes state once.
CREATE TABLE stripe_events (
  event_id    text PRIMARY KEY,                                       -- evt_…
  type        text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

-- `unknown`: the processor was called but its answer never came (a timeout, a lost response): settled from
-- Stripe's record by reconciliation or a webhook, never charged under another key. `requires_action`: the bank asks
-- for 3-D Secure; the invoice stays open until the customer completes it (charge_id = the PaymentIntent).
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_status_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_status_check
  CHECK (status IN ('pending', 'unknown', 'requires_action', 'succeeded', 'failed'));
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_open_check
  CHECK ((status IN ('pending', 'unknown')) = (completed_at IS NULL));
CREATE INDEX payment_attempts_unknown ON payment_attempts (invoice_id) WHERE status = 'unknown';

-- A dispute on a paid invoice's charge, as Stripe reports it (charge.dispute.created / closed).
ALTER TABLE invoices ADD COLUMN dispute_status text;
