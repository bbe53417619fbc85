-- Invoice emails (issue 31, docs/emails.md): one row per email to send — a billing document (an issued invoice, a
-- failed payment's invoice, a credit note) to the customer's billing email. The dispatcher's event fan-out
-- writes the row before it acks the event, so a redelivered event finds it (UNIQUE (event_id, recipient)) and
-- adds none; the dispatcher's mail delivery sends pending rows, retried on the webhook schedule, and marks a
-- row sent once the SMTP server accepted the message. Claimed under FOR UPDATE SKIP LOCKED with a lease, like
-- webhook_deliveries: two dispatchers never send the same row at once.
CREATE TABLE invoice_emails (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  event_type text NOT NULL,
  account_id text NOT NULL REFERENCES accounts (id),
  kind text NOT NULL CHECK (kind IN ('invoice', 'payment_failed', 'credit_note')),
  invoice_id text NOT NULL REFERENCES invoices (id),
  credit_note_id text REFERENCES credit_notes (id),
  recipient text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  -- Attempts made so far; the next is due at next_attempt_at (null once sent or failed for good).
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  CONSTRAINT invoice_emails_once UNIQUE (event_id, recipient)
);
CREATE INDEX invoice_emails_due ON invoice_emails (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX invoice_emails_invoice ON invoice_emails (invoice_id);

-- When the invoice's own email (kind 'invoice') was accepted by the SMTP server; null until then.
ALTER TABLE invoices ADD COLUMN emailed_at timestamptz;
