-- Billing per group (issue 18, services/domain/pricing/invoice-lines.ts). `group_by`: the dimension keys a metered
-- item's usage is split by on the invoice — one usage line per group of values, each priced by the product's
-- model on its own (tiers per group). Empty: one line for the whole meter, as before.
ALTER TABLE subscription_items ADD COLUMN group_by text[] NOT NULL DEFAULT '{}' CHECK (cardinality(group_by) <= 4);

-- The group a usage or adjustment line bills: {"model": "gpt-x", "region": null} (null: records without that
-- dimension). NULL on lines of ungrouped items. Late usage re-prices each group of an invoiced period apart.
ALTER TABLE invoice_lines ADD COLUMN dimensions jsonb;
