-- Webhook registrations and their delivery attempts. The signing secret is sealed (AES-256-GCM under a
-- key derived from SECRET_KEY): delivery needs the plaintext to sign, the database never sees it.
CREATE TABLE webhooks (
  id            text PRIMARY KEY,                -- wh_…
  seq           bigserial UNIQUE,
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  url           text NOT NULL,
  events        text[] NOT NULL CHECK (cardinality(events) > 0),
  status        text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  secret_sealed text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_account ON webhooks (account_id, seq DESC);
-- Fan-out lookup: the enabled webhooks of an account subscribed to an event type.
CREATE INDEX webhooks_enabled_events ON webhooks USING gin (events) WHERE status = 'enabled';

-- One row per delivery attempt of an event to a webhook.
CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,              -- whd_…
  seq             bigserial UNIQUE,
  webhook_id      text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  account_id      text NOT NULL,
  event_id        text NOT NULL,                 -- evt_…
  event_type      text NOT NULL,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  response_status integer,
  error           text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, seq DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
