-- Control-plane events, written in the same transaction as the change they describe; the dispatcher
-- relays them to the EVENTS stream and marks them published. A rolled-back change leaves no row.
CREATE TABLE outbox_events (
  id           text PRIMARY KEY,              -- evt_…
  seq          bigserial UNIQUE,              -- relay order
  account_id   text NOT NULL,
  type         text NOT NULL,
  data         jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_events_unpublished ON outbox_events (seq) WHERE published_at IS NULL;
