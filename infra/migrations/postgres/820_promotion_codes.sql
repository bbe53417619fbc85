-- Promotion codes (issue 44 item 2, docs/checkout.md): customer-facing codes for the deployment's coupons. Grants:
-- the owner's default privileges give meterline_app every table this file creates (infra/stack/postgres.ts). Expands only.

-- A code is unique in the deployment whatever its case (the unique index on lower(code)); what a customer types is
-- matched the same way. times_redeemed counts redemptions: the redeeming UPDATE checks it against max_redemptions in
-- the same statement, so N concurrent redemptions of a code with k slots left make exactly min(N, k) redemptions.
CREATE TABLE promotion_codes (
  id              text PRIMARY KEY,                                   -- promo_…
  coupon_id       text NOT NULL REFERENCES coupons (id),
  code            text NOT NULL CHECK (code ~ '^[A-Za-z0-9_-]{1,64}$'),
  max_redemptions integer CHECK (max_redemptions >= 1),
  times_redeemed  integer NOT NULL DEFAULT 0,
  expires_at      timestamptz,
  first_time_only boolean NOT NULL DEFAULT false,
  active          boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (max_redemptions IS NULL OR times_redeemed <= max_redemptions)
);
CREATE UNIQUE INDEX promotion_codes_code ON promotion_codes (lower(code));
CREATE INDEX promotion_codes_newest ON promotion_codes (created_at DESC, id DESC);

CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON promotion_codes FOR EACH ROW EXECUTE FUNCTION audit_row_change('promotion_code', 'id');
