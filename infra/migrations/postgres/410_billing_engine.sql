-- The billing engine (services/domain/billing): period close, payment attempts, dunning.

-- Where each subscription's billing stands: the first day (00:00 UTC) of the next period to invoice. A run
-- closes the period [billing_period_start, +1 month) once its end plus BILLING_GRACE_SECONDS has passed, in the
-- same transaction that writes the invoice, and moves this to the next month. NULL once a canceled
-- subscription's last period (the month of canceled_at) is invoiced: nothing is billed after that.
ALTER TABLE subscriptions ADD COLUMN billing_period_start timestamptz;
UPDATE subscriptions SET billing_period_start = date_trunc('month', created_at, 'UTC');

-- New subscriptions start billing with the month of their creation (docs/design.md §8): set here so the
-- subscription store need not know about billing.
CREATE FUNCTION subscriptions_billing_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.billing_period_start IS NULL THEN
    NEW.billing_period_start := date_trunc('month', NEW.created_at, 'UTC');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER subscriptions_billing_start BEFORE INSERT ON subscriptions
  FOR EACH ROW EXECUTE FUNCTION subscriptions_billing_start();

-- "Which subscriptions have a period due?" — billing_period_start < the month of (now − grace).
CREATE INDEX subscriptions_billing_due ON subscriptions (billing_period_start) WHERE billing_period_start IS NOT NULL;

-- Dunning state (docs/design.md §8 Invoice): when the next automatic attempt runs (NULL: none planned — paid,
-- uncollectible or void) and why the last one failed ({code, message}).
ALTER TABLE invoices ADD COLUMN next_payment_attempt_at timestamptz;
ALTER TABLE invoices ADD COLUMN last_payment_error jsonb;
-- A gauge meter may report a negative quantity, so a line (and in principle an invoice) may be a credit;
-- an invoice whose amount is not positive is settled without a charge.
ALTER TABLE invoices DROP CONSTRAINT invoices_amount_check;
CREATE INDEX invoices_payment_due ON invoices (next_payment_attempt_at) WHERE status = 'open' AND next_payment_attempt_at IS NOT NULL;

-- One row per payment attempt, written (status 'pending') and committed BEFORE the processor is called, so a
-- crash after the charge finds the attempt again and completes it with the same idempotency key
-- (`<invoice id>:<attempt>`) instead of charging a second time.
CREATE TABLE payment_attempts (
  invoice_id        text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
  attempt           integer NOT NULL CHECK (attempt >= 1),
  payment_method_id text REFERENCES payment_methods(id),           -- NULL: there was no method to charge
  idempotency_key   text NOT NULL UNIQUE,
  status            text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  failure_code      text,
  charge_id         text,                                          -- the processor's charge id on success
  manual            boolean NOT NULL DEFAULT false,                -- POST /v1/billing/invoices/{id}/pay
  created_at        timestamptz NOT NULL DEFAULT now(),
  completed_at      timestamptz,
  PRIMARY KEY (invoice_id, attempt),
  CHECK ((status = 'pending') = (completed_at IS NULL)),
  CHECK ((status = 'failed') = (failure_code IS NOT NULL))
);
-- Attempts a crash left unfinished.
CREATE INDEX payment_attempts_pending ON payment_attempts (invoice_id) WHERE status = 'pending';

-- The sandbox processor's own ledger (services/domain/payments/sandbox.ts): what a real processor keeps on
-- its side. One row per idempotency key — the same key always reports the same charge — so tests and
-- operators can count the charges that were really made.
CREATE TABLE sandbox_charges (
  idempotency_key text PRIMARY KEY,
  charge_id       text NOT NULL UNIQUE,
  processor_token text NOT NULL,
  amount          numeric NOT NULL CHECK (amount > 0),
  currency        text NOT NULL,
  status          text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  failure_code    text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
