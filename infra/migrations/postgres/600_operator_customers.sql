-- Operator mode (issue 26, docs/design.md §6): a customer IS an account. What the Customers API adds to an
-- account: a deployment-unique external id (the operator's own id for the customer; null for accounts made with
-- the CLI until an operator sets one), a billing email, free-form metadata and when it last changed.
ALTER TABLE accounts ADD COLUMN external_id text;
ALTER TABLE accounts ADD COLUMN email text;
ALTER TABLE accounts ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
ALTER TABLE accounts ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE UNIQUE INDEX accounts_external_id_key ON accounts (external_id) WHERE external_id IS NOT NULL;
CREATE INDEX accounts_newest ON accounts (created_at DESC, id DESC);

-- The customer registry (shared/customers/) is replicated to every api process through a NATS KV bucket of
-- 65,536 shard entries, each holding every customer of its shard; this is the shard of an account, the first
-- 16 bits of MD5(account id) — shared/customers/shards.ts computes the same in JS. Writers of a shard hold
-- pg_advisory_xact_lock(CUSTOMER_SHARD_LOCK, shard) while they rewrite its entry, so one shard's entries are
-- written in commit order, and the index lets a writer read its shard's rows.
CREATE FUNCTION customer_registry_shard(account_id text) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT ('x' || substr(md5(account_id), 1, 4))::bit(16)::integer $$;
CREATE INDEX accounts_registry_shard ON accounts (customer_registry_shard(id));

-- Deployment meters: one definition for every customer, usage kept per customer (docs/design.md §6). The row's
-- account_id is the operator account that created it; only `admin` tokens change it.
ALTER TABLE meters ADD COLUMN scope text NOT NULL DEFAULT 'account' CHECK (scope IN ('account', 'deployment'));
CREATE INDEX meters_deployment_newest ON meters (created_at DESC, id DESC) WHERE scope = 'deployment';

-- Deployment webhooks: an operator's webhook that receives every customer's events (each event's data names the
-- customer: customer_id, and external_id when it has one). Made by admin tokens only.
ALTER TABLE webhooks ADD COLUMN scope text NOT NULL DEFAULT 'account' CHECK (scope IN ('account', 'deployment'));
CREATE INDEX webhooks_deployment ON webhooks (seq) WHERE scope = 'deployment' AND status = 'enabled';
