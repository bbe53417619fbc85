-- Commercial terms belong to the operator (issue 49 item 2; docs/operator-mode.md "Who changes a subscription's
-- terms"). Expands only: existing subscriptions count as their customer's own, existing products allow the
-- customer's own meters, and no portal_settings row means every setting at its default.

-- Made by an admin token (the operator, usually for a customer): only the operator changes what it bills, or the
-- customer as far as portal_settings allows.
ALTER TABLE subscriptions ADD COLUMN operator_managed boolean NOT NULL DEFAULT false;

-- false: a subscription item of this product must name a deployment meter (no self-reported usage).
ALTER TABLE products ADD COLUMN allow_customer_meters boolean NOT NULL DEFAULT true;

-- The deployment's one row of portal settings: what customers may do themselves. Stored as the settings the
-- operator set (jsonb, merged over the defaults in services/domain/portal-settings/settings.ts) so a new
-- setting needs no migration.
CREATE TABLE portal_settings (
  id         boolean PRIMARY KEY DEFAULT true CHECK (id),
  settings   jsonb NOT NULL DEFAULT '{}'::jsonb,
  updated_at timestamptz NOT NULL DEFAULT now()
);
