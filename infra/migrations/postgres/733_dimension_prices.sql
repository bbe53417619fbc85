-- Per-dimension prices (issue 46, services/domain/pricing/dimension-prices.ts, docs/billing.md "Per-dimension
-- prices"): a usage-priced item may price its meter by the value of one dimension —
-- {"dimension": "model", "prices": [{"value": "large", "price": {…a price model…}}, …], "default_price": {…} | null}.
-- NULL: priced by the product's model, as before. Expand-only: a new nullable column.
ALTER TABLE subscription_items ADD COLUMN dimension_prices jsonb;
