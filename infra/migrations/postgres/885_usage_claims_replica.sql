-- Where an account's claims are complete (issue 45; services/domain/usage/claim-lock.ts): "<owner> <replica>",
-- written by the account's last claimer after its claims were stored on that ClickHouse replica (the replica's
-- `replica` macro). Every claimer leaves the replica it used holding every claim of the account (it synced it first
-- unless this column named it), so a claimer that finds its own replica named here — written by the owner it takes
-- over from — needs no SYSTEM SYNC REPLICA under the claim lock. Anything else (no row, a value an older consumer
-- left stale, another replica) means: sync first. Expand-only: older consumers never read it.
ALTER TABLE usage_identity_owners ADD COLUMN IF NOT EXISTS claims_at text;
