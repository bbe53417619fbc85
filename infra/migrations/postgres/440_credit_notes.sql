-- Credit notes and void (docs/design.md §8 Credit notes). Grants: the owner's default privileges give
-- meterline_app every table this file creates (infra/stack/postgres.ts); ALTERed tables keep their grants.

-- What credit notes took off an invoice so far. Written only under the invoice's row lock, in the transaction
-- that inserts the credit note, so concurrent notes are serialised; the CHECK is the last line of defence: the
-- notes of an invoice never add up to more than its amount. What is still owed on an unpaid invoice (what a
-- payment attempt charges) is amount − amount_credited; a note that brings it to 0 settles the invoice.
ALTER TABLE invoices ADD COLUMN amount_credited numeric NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD CONSTRAINT invoices_amount_credited_check CHECK (amount_credited >= 0 AND (amount_credited = 0 OR amount_credited <= amount));

-- A credit note: `credit` lowers what is owed on an unpaid invoice; `refund` pays back part of a paid one
-- through the processor. A refund is recorded (refund_status 'pending') and committed BEFORE the processor is
-- called with idempotency key `<credit note id>:refund`, so a crash in between is completed later with the same
-- key (by a retried request or the billing run) and the money goes back exactly once.
CREATE TABLE credit_notes (
  id                  text PRIMARY KEY,                                     -- cn_…
  account_id          text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  invoice_id          text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
  type                text NOT NULL CHECK (type IN ('credit', 'refund')),
  currency            text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  amount              numeric NOT NULL CHECK (amount > 0),                  -- = sum of its lines
  reason              text NOT NULL,
  refund_status       text CHECK (refund_status IN ('pending', 'succeeded', 'failed')),
  refund_id           text,                                                 -- the processor's refund id on success
  refund_failure_code text,
  -- The request's Idempotency-Key: the same request re-run after a crash finds this note instead of a second one.
  request_key         text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'refund') = (refund_status IS NOT NULL)),
  CHECK ((refund_status = 'failed') = (refund_failure_code IS NOT NULL)),
  UNIQUE (invoice_id, request_key)
);
CREATE INDEX credit_notes_account_newest ON credit_notes (account_id, created_at DESC, id DESC);
CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id);
CREATE INDEX credit_notes_refund_pending ON credit_notes (created_at) WHERE refund_status = 'pending';

-- Lines: what each part of the note credits. invoice_position names the invoice line credited (NULL: a note
-- given as a plain amount); quantity is set when the line was credited by quantity.
CREATE TABLE credit_note_lines (
  credit_note_id   text NOT NULL REFERENCES credit_notes(id) ON DELETE CASCADE,
  position         integer NOT NULL CHECK (position >= 0),
  invoice_position integer CHECK (invoice_position >= 0),
  description      text NOT NULL,
  quantity         numeric CHECK (quantity > 0),
  amount           numeric NOT NULL CHECK (amount > 0),
  PRIMARY KEY (credit_note_id, position)
);

-- The sandbox processor's refunds (services/domain/payments/sandbox.ts), one row per idempotency key.
CREATE TABLE sandbox_refunds (
  idempotency_key text PRIMARY KEY,
  refund_id       text NOT NULL UNIQUE,
  charge_id       text NOT NULL,
  amount          numeric NOT NULL CHECK (amount > 0),
  currency        text NOT NULL,
  status          text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  failure_code    text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_refunds_charge ON sandbox_refunds (charge_id);
