-- Subscriptions of an account to catalog products. Periods are calendar months in UTC starting with the
-- month of created_at; a canceled subscription's last period is the month of canceled_at
-- (services/domain/subscriptions/periods.ts computes them).
CREATE TABLE subscriptions (
  id          text PRIMARY KEY,                                 -- sub_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  status      text NOT NULL CHECK (status IN ('active', 'canceled')),
  currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),     -- every item's product is in this currency
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  canceled_at timestamptz,
  CHECK ((status = 'canceled') = (canceled_at IS NOT NULL))
);
CREATE INDEX subscriptions_account_newest ON subscriptions (account_id, created_at DESC, id DESC);

-- Items in the order the client gave them. meter_id is set exactly for metered products (checked by the API).
CREATE TABLE subscription_items (
  subscription_id text NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
  position        integer NOT NULL,
  product_id      text NOT NULL REFERENCES products(id),
  meter_id        text REFERENCES meters(id),
  PRIMARY KEY (subscription_id, position)
);
-- "Is this product used by an active subscription?" (product DELETE → 409).
CREATE INDEX subscription_items_product ON subscription_items (product_id);
