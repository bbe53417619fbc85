-- Idempotency-Key results (shared/http/idempotency.ts), per account and route, kept 24 h.
-- state 'running' is a claim with a lease (locked_until): a crashed request's claim can be taken over.
CREATE TABLE idempotency_keys (
  account_id            text NOT NULL,
  route                 text NOT NULL,                         -- 'POST /v1/meters'
  key                   text NOT NULL,
  fingerprint           text NOT NULL,                         -- sha256 of method, path, query and body
  state                 text NOT NULL CHECK (state IN ('running', 'done')),
  locked_until          timestamptz,
  response_status       integer,
  response_headers      jsonb,
  response_content_type text,
  response_body         bytea,
  created_at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, route, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
