-- The deployment's product catalog (every token reads it, admin writes it). Prices are exact decimals with
-- up to 9 places, like ClickHouse's Decimal(38, 9). A deleted product keeps its row (deleted_at) so that
-- canceled subscriptions and past invoices still name it; the API no longer shows it.
CREATE TABLE products (
  id         text PRIMARY KEY,                                  -- prod_…
  name       text NOT NULL,
  price      numeric(38, 9) NOT NULL CHECK (price >= 0),
  currency   text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),     -- ISO 4217, upper case
  pricing    text NOT NULL DEFAULT 'flat' CHECK (pricing IN ('flat', 'metered')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- Lists: newest first, ties broken by id.
CREATE INDEX products_live_newest ON products (created_at DESC, id DESC) WHERE deleted_at IS NULL;
