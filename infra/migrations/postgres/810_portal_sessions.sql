-- Customer portal sessions (issue 44, docs/portal.md). Expands only: a new table.
-- An operator makes a session for one customer: its link carries a random 256-bit token of which only the SHA-256
-- is kept (link_hash). Opening the link once exchanges it for a browser session (opened_at set, cookie_hash the
-- SHA-256 of the cookie's random value); the link never works again, and an unopened one stops at expires_at.
CREATE TABLE portal_sessions (
  id                 text PRIMARY KEY,                                       -- pts_…
  account_id         text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  link_hash          bytea NOT NULL UNIQUE,
  return_url         text NOT NULL,
  locale             text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz NOT NULL,
  opened_at          timestamptz,
  cookie_hash        bytea UNIQUE,
  session_expires_at timestamptz
);
CREATE INDEX portal_sessions_account ON portal_sessions (account_id);

-- Making a session and opening it are audited like every business object (docs/audit.md); both hashes are redacted.
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON portal_sessions FOR EACH ROW EXECUTE FUNCTION audit_row_change('portal_session', 'id', 'link_hash', 'cookie_hash');
