-- contract: invoices_subscription_id_period_start_key, used by the previous release's period close only; its billing processes stop before this migration (docs/upgrades.md, "Upgrading to progressive billing")
-- Progressive billing (issue 28, docs/billing.md "Progressive billing"): a subscription's billing_threshold; when the
-- running period's amount due reaches it, a `threshold` invoice bills the amount so far at once, and the period's
-- final invoice deducts what threshold invoices billed (`deduction` lines referencing them).
ALTER TABLE subscriptions ADD COLUMN billing_threshold numeric CHECK (billing_threshold > 0);
-- The scheduler's threshold pass looks only at running subscriptions with a threshold.
CREATE INDEX subscriptions_with_threshold ON subscriptions (id) WHERE billing_threshold IS NOT NULL AND status = 'active';

-- reason: `period` (the period's invoice, one per period) or `threshold` (numbered 1, 2, … within its period).
ALTER TABLE invoices ADD COLUMN reason text NOT NULL DEFAULT 'period' CHECK (reason IN ('period', 'threshold'));
ALTER TABLE invoices ADD COLUMN threshold_seq integer CHECK (threshold_seq >= 1);
ALTER TABLE invoices ADD CONSTRAINT invoices_threshold_seq CHECK ((reason = 'threshold') = (threshold_seq IS NOT NULL));
-- One period invoice per (subscription, period) as before; each threshold invoice of a period once: two billing
-- processes, or a run repeated after a kill -9, find these rows instead of writing a second invoice.
CREATE UNIQUE INDEX invoices_one_per_period ON invoices (subscription_id, period_start) WHERE reason = 'period';
CREATE UNIQUE INDEX invoices_threshold_once ON invoices (subscription_id, period_start, threshold_seq) WHERE reason = 'threshold';
ALTER TABLE invoices DROP CONSTRAINT invoices_subscription_id_period_start_key;

-- Every line type (626_draft_invoices.sql) and `deduction`.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_type_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_type_check
  CHECK (type IN ('flat', 'usage', 'minimum_commitment', 'credit', 'adjustment', 'tax', 'one_off', 'deduction')) NOT VALID;
