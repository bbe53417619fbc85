-- Meters of an account. The ingress never reads this table: the control plane mirrors each row into the NATS
-- KV meter bucket (shared/meters/record.ts) before committing, and reconciles the bucket on start.
-- updated_at is kept at millisecond precision so that it equals the KV record's updated_at_ms exactly.
CREATE TABLE meters (
  id          text PRIMARY KEY,                                 -- mtr_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name        text NOT NULL,
  unit        text NOT NULL,
  type        text NOT NULL CHECK (type IN ('counter', 'gauge', 'histogram')),
  aggregation text NOT NULL CHECK (
    (type = 'counter' AND aggregation IN ('sum', 'count')) OR
    (type = 'gauge' AND aggregation IN ('last', 'max', 'min', 'avg')) OR
    (type = 'histogram' AND aggregation IN ('sum', 'count', 'min', 'max', 'avg', 'p50', 'p90', 'p95', 'p99'))
  ),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX meters_account_newest ON meters (account_id, created_at DESC, id DESC);
CREATE INDEX meters_account_status_newest ON meters (account_id, status, created_at DESC, id DESC);
