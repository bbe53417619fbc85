-- Accounts (billed customers), their users, OAuth clients and token signing keys.
CREATE TABLE accounts (
  id          text PRIMARY KEY,                -- acct_…
  customer_id text NOT NULL UNIQUE,            -- cus_…
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id            text PRIMARY KEY,              -- usr_…
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  email         text NOT NULL,
  password_hash text NOT NULL,                 -- scrypt, PHC-style string; never the password
  is_operator   boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE oauth_clients (
  id            text PRIMARY KEY,              -- cli_…
  name          text NOT NULL,
  secret_hash   text,                          -- NULL for public clients
  redirect_uris text[] NOT NULL,
  is_public     boolean NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (is_public = (secret_hash IS NULL))
);

-- Ed25519 keys; the private half is sealed with a key derived from SECRET_KEY.
CREATE TABLE signing_keys (
  kid                 text PRIMARY KEY,
  public_jwk          jsonb NOT NULL,
  sealed_private_jwk  text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  retired_at          timestamptz
);
