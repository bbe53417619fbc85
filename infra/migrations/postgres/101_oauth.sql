-- OAuth 2.0 authorization server state (docs/design.md §7).
-- Every opaque secret (authorization code, refresh token, session id, client secret) is stored only as
-- its SHA-256 (base64url): they are 256-bit random values, so a fast hash suffices and a leaked row
-- cannot be presented. Access tokens are JWTs; only their ids are kept, to revoke them.

-- What a user allowed a client: the root every code, refresh token and access token hangs from.
CREATE TABLE oauth_grants (
  id             text PRIMARY KEY,                                   -- grt_…
  account_id     text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  client_id      text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
  scopes         text[] NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz,
  revoked_reason text                                                -- code_replay, refresh_token_reuse, revoked_by_client …
);
CREATE INDEX oauth_grants_user_idx ON oauth_grants (user_id);
CREATE INDEX oauth_grants_client_idx ON oauth_grants (client_id);

-- Single-use, ≤ 60 s, bound to client, redirect URI and PKCE challenge. Kept after redemption
-- (redeemed_at, grant_id) so a replay can revoke what the first redemption issued.
CREATE TABLE oauth_authorization_codes (
  code_hash               text PRIMARY KEY,
  client_id               text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
  account_id              text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  user_id                 text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri            text NOT NULL,
  redirect_uri_in_request boolean NOT NULL,                          -- RFC 6749 §4.1.3: then the token request must repeat it
  scopes                  text[] NOT NULL,
  code_challenge          text,                                      -- S256 only; NULL when the (confidential) client sent none
  created_at              timestamptz NOT NULL DEFAULT now(),
  expires_at              timestamptz NOT NULL,
  redeemed_at             timestamptz,
  grant_id                text REFERENCES oauth_grants(id) ON DELETE CASCADE,
  CHECK (expires_at <= created_at + interval '60 seconds')
);
CREATE INDEX oauth_authorization_codes_expires_idx ON oauth_authorization_codes (expires_at);

-- Rotated on every use; parent_id is the lineage. Presenting a rotated one revokes the grant.
CREATE TABLE oauth_refresh_tokens (
  id          text PRIMARY KEY,                                      -- tok_…
  token_hash  text NOT NULL UNIQUE,
  grant_id    text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  parent_id   text REFERENCES oauth_refresh_tokens(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  rotated_at  timestamptz,                                           -- exchanged for its successor
  revoked_at  timestamptz
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_tokens_parent_idx ON oauth_refresh_tokens (parent_id);

-- Issued access tokens by id, so revoking a grant can revoke them. published_at: the revocation
-- reached the NATS KV revocation list (housekeeping retries until it did).
CREATE TABLE oauth_access_tokens (
  jti          text PRIMARY KEY,
  grant_id     text REFERENCES oauth_grants(id) ON DELETE CASCADE,   -- NULL for tokens minted outside a grant (test fixtures)
  client_id    text NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  published_at timestamptz
);
CREATE INDEX oauth_access_tokens_grant_idx ON oauth_access_tokens (grant_id);
CREATE INDEX oauth_access_tokens_expires_idx ON oauth_access_tokens (expires_at);
CREATE INDEX oauth_access_tokens_unpublished_idx ON oauth_access_tokens (revoked_at) WHERE revoked_at IS NOT NULL AND published_at IS NULL;

-- Signed-in browser sessions of the authorization pages (cookie value hashed).
CREATE TABLE oauth_sessions (
  id_hash    text PRIMARY KEY,
  user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_sessions_expires_idx ON oauth_sessions (expires_at);
