-- Price models, commitments and typed invoice lines (docs/design.md §8 Product, Subscription, Invoice).
-- Grants: the owner's default privileges give meterline_app every table this file creates
-- (infra/stack/postgres.ts); ALTERed tables keep their grants.

-- A product is flat, metered (price per unit), tiered (graduated or volume tiers) or package (price per
-- started package of package_size units). tiers: [{"up_to": "1000" | null, "unit_price": "0.01",
-- "flat_price": "0"}] as exact decimal strings, ascending, the last up_to null.
ALTER TABLE products DROP CONSTRAINT products_pricing_check;
ALTER TABLE products ADD CONSTRAINT products_pricing_check CHECK (pricing IN ('flat', 'metered', 'tiered', 'package'));
ALTER TABLE products ADD COLUMN tiers_mode text CHECK (tiers_mode IN ('graduated', 'volume'));
ALTER TABLE products ADD COLUMN tiers jsonb;
ALTER TABLE products ADD COLUMN package_size numeric(38, 9) CHECK (package_size > 0);
ALTER TABLE products ADD CONSTRAINT products_tiered_shape CHECK ((pricing = 'tiered') = (tiers IS NOT NULL AND tiers_mode IS NOT NULL));
ALTER TABLE products ADD CONSTRAINT products_package_shape CHECK ((pricing = 'package') = (package_size IS NOT NULL));

-- A minimum commitment per period on an item: usage priced below it is trued up to it.
ALTER TABLE subscription_items ADD COLUMN minimum_amount numeric(38, 9) CHECK (minimum_amount >= 0);

-- What a line is: a flat item, an item's usage, a minimum-commitment true-up, applied prepaid credit (negative),
-- or an adjustment for usage of an earlier, already invoiced period (adjusts_invoice_id names that invoice).
ALTER TABLE invoice_lines ADD COLUMN type text NOT NULL DEFAULT 'usage'
  CHECK (type IN ('flat', 'usage', 'minimum_commitment', 'credit', 'adjustment'));
UPDATE invoice_lines SET type = 'flat' WHERE meter_id IS NULL;
ALTER TABLE invoice_lines ALTER COLUMN type DROP DEFAULT;
ALTER TABLE invoice_lines ALTER COLUMN product_id DROP NOT NULL;          -- credit lines name no product
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_unit_price_check; -- a credit line's price is negative
-- The price model (and the item's minimum) a usage line was priced with, so that usage arriving after the
-- invoice is re-priced at that period's rates even if the product's price changed since.
ALTER TABLE invoice_lines ADD COLUMN price_model jsonb;
ALTER TABLE invoice_lines ADD COLUMN adjusts_invoice_id text REFERENCES invoices(id);
CREATE INDEX invoice_lines_adjusts ON invoice_lines (adjusts_invoice_id) WHERE adjusts_invoice_id IS NOT NULL;
