-- Coupons and discounts (issue 29 item 4, docs/coupons.md). Grants: the owner's default privileges give meterline_app
-- every table this file creates (infra/stack/postgres.ts); ALTERed tables keep their grants. Expands only.

-- The deployment's coupons (admin). A coupon never changes once created (invoices name it): exactly one of
-- percent_off (0 < p ≤ 100) or amount_off + currency. times_redeemed counts redemptions; the redeeming UPDATE checks
-- it against max_redemptions in the same statement, so two redemptions of the last slot cannot both win.
CREATE TABLE coupons (
  id                  text PRIMARY KEY,                                         -- coupon_…
  name                text NOT NULL,
  percent_off         numeric CHECK (percent_off > 0 AND percent_off <= 100),
  amount_off          numeric CHECK (amount_off > 0),
  currency            text CHECK (currency ~ '^[A-Z]{3}$'),
  duration            text NOT NULL CHECK (duration IN ('once', 'repeating', 'forever')),
  duration_in_periods integer CHECK (duration_in_periods >= 1),
  max_redemptions     integer CHECK (max_redemptions >= 1),
  times_redeemed      integer NOT NULL DEFAULT 0,
  expires_at          timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((percent_off IS NULL) <> (amount_off IS NULL)),
  CHECK ((amount_off IS NULL) = (currency IS NULL)),
  CHECK ((duration = 'repeating') = (duration_in_periods IS NOT NULL)),
  CHECK (max_redemptions IS NULL OR times_redeemed <= max_redemptions)
);
CREATE INDEX coupons_newest ON coupons (created_at DESC, id DESC);

-- A coupon applied to a subscription. It discounts the periods from first_period_start (the period it was redeemed
-- in) on, `once` 1 and `repeating` duration_in_periods of them (counted by the subscription's period invoices), until
-- the period it was removed or replaced in (ended_period_start, exclusive). At most one current per subscription.
CREATE TABLE coupon_redemptions (
  id                 bigserial PRIMARY KEY,
  coupon_id          text NOT NULL REFERENCES coupons (id),
  subscription_id    text NOT NULL REFERENCES subscriptions (id),
  account_id         text NOT NULL,
  first_period_start timestamptz NOT NULL,
  ended_period_start timestamptz,
  redeemed_at        timestamptz NOT NULL,
  ended_at           timestamptz
);
CREATE UNIQUE INDEX coupon_redemptions_current ON coupon_redemptions (subscription_id) WHERE ended_at IS NULL;
CREATE INDEX coupon_redemptions_of_subscription ON coupon_redemptions (subscription_id, first_period_start);

-- `discount` lines name their coupon: a late-usage adjustment re-discounts its period with the coupons that
-- discounted it, whatever the subscription carries now.
ALTER TABLE invoice_lines ADD COLUMN coupon_id text;
-- Every line type (650_progressive_billing.sql) and `discount`.
ALTER TABLE invoice_lines DROP CONSTRAINT invoice_lines_type_check;
ALTER TABLE invoice_lines ADD CONSTRAINT invoice_lines_type_check
  CHECK (type IN ('flat', 'usage', 'minimum_commitment', 'credit', 'adjustment', 'tax', 'one_off', 'deduction', 'discount')) NOT VALID;
