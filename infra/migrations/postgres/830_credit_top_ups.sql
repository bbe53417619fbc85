-- Prepaid credit bought by the customer (issue 44 item 4, docs/credits.md "Prepaid credit"). A top-up is an invoice
-- of its own kind (reason `top_up`: no subscription, one line, no tax) charged through the processor; the grant is
-- made in the transaction that marks the invoice paid. `credit_grants.source_invoice_id` is UNIQUE: a webhook
-- redelivered, a reconcile or a retried step finds the grant already there and makes none.
ALTER TABLE invoices ALTER COLUMN subscription_id DROP NOT NULL;
ALTER TABLE invoices DROP CONSTRAINT invoices_reason_check;
ALTER TABLE invoices ADD CONSTRAINT invoices_reason_check CHECK (reason IN ('period', 'threshold', 'advance', 'top_up'));
ALTER TABLE invoices ADD CONSTRAINT invoices_subscription_unless_top_up CHECK ((reason = 'top_up') = (subscription_id IS NULL));

CREATE TABLE credit_top_ups (
  id              text PRIMARY KEY,                                   -- ctu_…
  account_id      text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  invoice_id      text NOT NULL UNIQUE REFERENCES invoices(id) ON DELETE CASCADE,
  currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  amount          numeric NOT NULL CHECK (amount > 0),
  -- pending: charging (or waiting for 3-D Secure); paid: the grant is made; failed: the charge was declined.
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid', 'failed')),
  failure_code    text,
  -- manual: POST /v1/credit_top_ups (or the portal); auto_recharge: the balance fell below the customer's threshold.
  trigger         text NOT NULL CHECK (trigger IN ('manual', 'auto_recharge')),
  idempotency_key text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz
);
CREATE INDEX credit_top_ups_account_newest ON credit_top_ups (account_id, created_at DESC, id DESC);
-- The same key twice (a double click, a retried request) is the same top-up.
CREATE UNIQUE INDEX credit_top_ups_key ON credit_top_ups (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- At most one automatic top-up in flight per account: concurrent spends below the threshold buy once.
CREATE UNIQUE INDEX credit_top_ups_one_auto_in_flight ON credit_top_ups (account_id) WHERE trigger = 'auto_recharge' AND status = 'pending';
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_top_ups FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_top_up', 'id');

-- The paid invoice a grant was bought with: one grant per invoice, ever.
ALTER TABLE credit_grants ADD COLUMN source_invoice_id text UNIQUE REFERENCES invoices(id) ON DELETE CASCADE;
