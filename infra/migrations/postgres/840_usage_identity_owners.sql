-- Usage identity within a window (issue 45 item 3, docs/usage.md "Counted once"): per account, the consumer process
-- (a random id per process start) that last claimed record identities for it. A process trusts its in-memory
-- filter of an account's recent ids (services/domain/usage/recent-ids.ts) only while it is the account's owner here;
-- a process that takes an account over reloads its filter from the stored claims first. Written under the account's
-- claim lock, before its claims (services/domain/usage/claim-lock.ts). Bookkeeping, not a business record: left
-- out of the audit log (docs/audit.md).
CREATE TABLE IF NOT EXISTS usage_identity_owners (
  account_id text PRIMARY KEY,
  owner      text NOT NULL,
  since      timestamptz NOT NULL DEFAULT now()
);
