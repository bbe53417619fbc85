-- Cancelled usage records (issue 18 corrections, docs/design.md §10). One row per (account, meter, record id, hour
-- of the cancelled record), hour -1 for an id no stored record had when it was cancelled (one still in flight
-- is cancelled when it arrives). Every read of usage_records leaves these ids out, the hourly recompute too
-- (services/domain/usage/cancellations-store.ts). Rows are only ever added: a cancellation is final. Postgres keeps the
-- correction log (who, when, what, state), this table is what reads use. Keyed by account like the records,
-- so on a cluster it lives on the account's shard next to the rows it cancels.
CREATE TABLE IF NOT EXISTS {database}.usage_cancellations (
  account_id    String,
  meter_id      String,
  record_id     String,
  hour          Int64,
  correction_id String,
  cancelled_ms  Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (account_id, meter_id, record_id, hour);
