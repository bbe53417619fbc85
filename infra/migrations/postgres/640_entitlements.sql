-- Entitlements (issue 28, docs/entitlements.md): what a customer may use of a feature. One per (customer,
-- feature). A metered entitlement names a meter (the customer's own or a deployment meter) and a limit per
-- period; grants add to the limit of the period they were made in. Every api process keeps all of them in
-- memory (services/domain/entitlements/table.ts) and reloads when entitlement_table_version moves: triggers bump
-- it in the transaction of each change, so a reload after seeing the new version sees the change.
CREATE TABLE entitlements (
  id          text PRIMARY KEY,                                        -- ent_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE, -- the customer's account
  feature     text NOT NULL CHECK (feature ~ '^[a-z0-9_.-]{1,64}$'),
  type        text NOT NULL CHECK (type IN ('metered', 'boolean')),
  meter_id    text REFERENCES meters(id) ON DELETE CASCADE,
  "limit"     numeric,
  period      text CHECK (period IN ('billing_period', 'month', 'day')),
  overage     text CHECK (overage IN ('block', 'allow')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT entitlements_one_per_feature UNIQUE (account_id, feature),
  CHECK ((type = 'metered') = (meter_id IS NOT NULL AND "limit" IS NOT NULL AND period IS NOT NULL AND overage IS NOT NULL)),
  CHECK (type = 'metered' OR (meter_id IS NULL AND "limit" IS NULL AND period IS NULL AND overage IS NULL))
);
CREATE INDEX entitlements_newest ON entitlements (created_at DESC, id DESC);
CREATE INDEX entitlements_meter ON entitlements (meter_id) WHERE meter_id IS NOT NULL;

-- A top-up: `amount` more in the period containing granted_at (the customer's time when granted), until expires_at.
CREATE TABLE entitlement_grants (
  id             text PRIMARY KEY,                                     -- entg_…
  entitlement_id text NOT NULL REFERENCES entitlements(id) ON DELETE CASCADE,
  amount         numeric NOT NULL CHECK (amount > 0),
  granted_at     timestamptz NOT NULL,
  expires_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entitlement_grants_entitlement ON entitlement_grants (entitlement_id, granted_at);

-- entitlement.exhausted once per (entitlement, period): the row is inserted in the transaction that appends the
-- event to the outbox, so two evaluators racing write one row and one event.
CREATE TABLE entitlement_exhaustions (
  entitlement_id text NOT NULL REFERENCES entitlements(id) ON DELETE CASCADE,
  period_start   timestamptz NOT NULL,
  event_id       text,                                                 -- the entitlement.exhausted event
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (entitlement_id, period_start)
);

-- One row, bumped in the transaction of every change the in-memory table depends on: entitlements, grants, a
-- customer's names and clock, a clock's time (which moves its customers' periods). api processes poll it.
CREATE TABLE entitlement_table_version (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  version bigint NOT NULL
);
INSERT INTO entitlement_table_version (version) VALUES (0);

CREATE FUNCTION bump_entitlement_table_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE entitlement_table_version SET version = version + 1;
  RETURN NULL;
END $$;

CREATE TRIGGER entitlements_changed AFTER INSERT OR UPDATE OR DELETE ON entitlements
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_entitlement_table_version();
CREATE TRIGGER entitlement_grants_changed AFTER INSERT OR UPDATE OR DELETE ON entitlement_grants
  FOR EACH STATEMENT EXECUTE PROCEDURE bump_entitlement_table_version();
CREATE TRIGGER test_clock_moved AFTER UPDATE OF frozen_time ON test_clocks
  FOR EACH ROW WHEN (OLD.frozen_time IS DISTINCT FROM NEW.frozen_time)
  EXECUTE PROCEDURE bump_entitlement_table_version();
CREATE TRIGGER customer_names_or_clock_changed AFTER UPDATE OF external_id, customer_id, test_clock_id ON accounts
  FOR EACH ROW WHEN (OLD.external_id IS DISTINCT FROM NEW.external_id OR OLD.customer_id IS DISTINCT FROM NEW.customer_id
                     OR OLD.test_clock_id IS DISTINCT FROM NEW.test_clock_id)
  EXECUTE PROCEDURE bump_entitlement_table_version();
