-- Plans and versions (issue 29, docs/plans.md). Grants: the owner's default privileges give meterline_app every
-- table this file creates (infra/stack/postgres.ts); ALTERed tables keep their grants. Expands only (docs/upgrades.md).

-- A plan of the deployment (admin writes, everyone reads): a name for its versions. latest_version is the
-- newest version's number; a new version takes latest_version + 1 under the row's lock.
CREATE TABLE plans (
  id             text PRIMARY KEY,                                               -- plan_…
  latest_version integer NOT NULL CHECK (latest_version >= 1),
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plans_newest ON plans (created_at DESC, id DESC);

-- A plan's versions: immutable once written (a subscription names the version it was made from). The currency
-- is the plan's (every version's): a subscription's currency never changes, so a migration keeps it.
-- items: [{product_id, meter_id, minimum_amount (text|null), group_by, quantity}] in the order given.
CREATE TABLE plan_versions (
  plan_id        text NOT NULL REFERENCES plans(id),
  version        integer NOT NULL CHECK (version >= 1),
  name           text NOT NULL,
  currency       text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  interval       text NOT NULL CHECK (interval IN ('day', 'week', 'month', 'quarter', 'year')),
  interval_count integer NOT NULL CHECK (interval_count BETWEEN 1 AND 12),
  items          jsonb NOT NULL,
  trial_days     integer NOT NULL CHECK (trial_days >= 0),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plan_id, version)
);

-- A subscription made from a plan names the version its items came from (both NULL: an items-only subscription,
-- or one whose items were changed by hand since). pending_plan_version/pending_plan_at: a migration `at:
-- period_end` — the billing run moves the subscription to that version at that instant (its period's end).
ALTER TABLE subscriptions ADD COLUMN plan_id text REFERENCES plans(id);
ALTER TABLE subscriptions ADD COLUMN plan_version integer;
ALTER TABLE subscriptions ADD COLUMN pending_plan_version integer;
ALTER TABLE subscriptions ADD COLUMN pending_plan_at timestamptz;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_plan_version
  FOREIGN KEY (plan_id, plan_version) REFERENCES plan_versions (plan_id, version);
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_plan_pair CHECK ((plan_id IS NULL) = (plan_version IS NULL));
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_pending_plan
  CHECK ((pending_plan_version IS NULL) = (pending_plan_at IS NULL) AND (pending_plan_version IS NULL OR plan_id IS NOT NULL));
-- A migration finds a version's subscribers; the billing run the changes due.
CREATE INDEX subscriptions_on_plan_version ON subscriptions (plan_id, plan_version, id) WHERE plan_id IS NOT NULL;
CREATE INDEX subscriptions_pending_plan ON subscriptions (pending_plan_at) WHERE pending_plan_version IS NOT NULL;
