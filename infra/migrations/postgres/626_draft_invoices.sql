-- Drafts during the grace period (issue 31, docs/billing.md "Drafts"): with BILLING_DRAFTS on, a period's invoice
-- is written as a `draft` when the period ends — no number, no charge, no prepaid credit taken — and finalized
-- (re-priced over the usage as it is then, credit applied, numbered, charged) once BILLING_GRACE_SECONDS have
-- passed or an operator finalizes it early. An operator may add `one_off` lines to a draft.
ALTER TABLE invoices DROP CONSTRAINT invoices_status_check;
ALTER TABLE invoices ADD CONSTRAINT invoices_status_check
  CHECK (status IN ('draft', 'open', 'paid', 'uncollectible', 'void')) NOT VALID;
-- A finalized invoice is numbered (the previous release's inserts take the default); a draft never is.
ALTER TABLE invoices ADD CONSTRAINT invoices_draft_unnumbered CHECK (status <> 'draft' OR number IS NULL) NOT VALID;
-- The CHECK is re-created whole: it lists every line type, `tax` (620_tax.sql) included. A later migration adding a
-- line type must list all of these too.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_type_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_type_check
  CHECK (type IN ('flat', 'usage', 'minimum_commitment', 'credit', 'adjustment', 'tax', 'one_off')) NOT VALID;
-- The billing run's finalization pass and the close's "one draft at a time per subscription" check.
CREATE INDEX invoices_drafts ON invoices (subscription_id, period_end) WHERE status = 'draft';
