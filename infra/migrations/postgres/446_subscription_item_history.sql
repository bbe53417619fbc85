-- Proration (docs/design.md §8 Subscription): subscription_items keeps every item's history instead of being
-- rewritten. A row is the item as it was over [effective_from, effective_to): a change to the items closes the
-- rows it removes or alters (effective_to = the change's instant) and opens new ones (effective_from = that
-- instant); an unchanged item keeps its row. '-infinity' = on since the subscription began, NULL = still on.
-- The billing run prices each row over the part of the period it covers: flat items pro-rated to the second,
-- usage counted over that interval only. Current items are the rows with effective_to IS NULL.
ALTER TABLE subscription_items ADD COLUMN quantity integer NOT NULL DEFAULT 1 CHECK (quantity >= 1);
ALTER TABLE subscription_items ADD COLUMN effective_from timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE subscription_items ADD COLUMN effective_to timestamptz;
ALTER TABLE subscription_items ADD CONSTRAINT subscription_items_interval CHECK (effective_to IS NULL OR effective_to >= effective_from);
-- Positions are unique among current items only (the subscription store writes them so); a history row keeps
-- the position it last had.
ALTER TABLE subscription_items DROP CONSTRAINT subscription_items_pkey;
ALTER TABLE subscription_items ADD COLUMN id bigserial PRIMARY KEY;
CREATE INDEX subscription_items_of_subscription ON subscription_items (subscription_id, position) WHERE effective_to IS NULL;
CREATE INDEX subscription_items_history ON subscription_items (subscription_id, effective_from);

-- The interval an invoice line covers when it is less than its period (a pro-rated item): the flat line's
-- share, and the range a usage line's quantity was counted over — re-priced over the same range when late
-- usage arrives. NULL: the whole period.
ALTER TABLE invoice_lines ADD COLUMN service_start timestamptz;
ALTER TABLE invoice_lines ADD COLUMN service_end timestamptz;
