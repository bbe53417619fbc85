-- A metered entitlement may count the usage of one dimension value only (issue 46, docs/entitlements.md): e.g. the
-- tokens of `model = large`, priced apart by per-dimension prices. NULL: the meter's whole usage, as before.
-- Expand-only: two nullable columns, set together.
ALTER TABLE entitlements ADD COLUMN dimension_key text, ADD COLUMN dimension_value text,
  ADD CONSTRAINT entitlements_dimension_pair CHECK ((dimension_key IS NULL) = (dimension_value IS NULL));
