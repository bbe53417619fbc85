-- Webhook delivery (services/roles/dispatcher): the retry schedule lives in the attempt rows themselves.
-- A pending row is an attempt due at next_attempt_at; a dispatcher claims it with FOR UPDATE SKIP LOCKED
-- and a lease (lease_until) longer than the request timeout, so a restart loses nothing and two dispatchers
-- never send the same attempt at once.
ALTER TABLE webhook_deliveries
  ADD COLUMN duration_ms integer,
  ADD COLUMN lease_until timestamptz,
  ADD COLUMN attempted_at timestamptz;
-- One row per (event, webhook, attempt): a redelivered EVENTS message fans out once.
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_attempt_unique UNIQUE (event_id, webhook_id, attempt);
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, seq) WHERE status = 'pending';

-- Secret rotation: for 24 h after POST /v1/webhooks/{id}/rotate-secret the previous secret signs too.
ALTER TABLE webhooks
  ADD COLUMN previous_secret_sealed text,
  ADD COLUMN previous_secret_expires_at timestamptz;

-- The outbox is also the event log of GET /v1/events (30 days; rows are purged after 36 days so that a
-- usage record retried as late as the ingress accepts it still finds its meter.usage.recorded event).
CREATE INDEX outbox_events_account ON outbox_events (account_id, seq DESC);
CREATE INDEX outbox_events_account_type ON outbox_events (account_id, type, seq DESC);
CREATE INDEX outbox_events_created ON outbox_events (created_at);
