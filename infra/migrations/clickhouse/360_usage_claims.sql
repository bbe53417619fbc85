-- Record identities (issue 27, shared/usage/claims.ts, docs/design.md §10): a record is (account, meter, id),
-- whatever its timestamp. One row per identity the consumer stored, with the timestamp it was stored under;
-- kept forever (a few dozen bytes per record, compressed), so a retry that recomputed its timestamp is
-- recognised however late it comes. Ordered by the identity, so a batch's lookup reads the index granules of
-- its ids, not the meter's claims. Keyed by account like the records: on a cluster it lives on the account's
-- shard, where the consumer claims and inserts.
CREATE TABLE IF NOT EXISTS {database}.usage_claims (
  account_id  String,
  meter_id    String,
  record_id   String,
  ts_ms       Int64,
  claimed_ms  Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (account_id, meter_id, record_id);

-- Records stored before this migration: claimed under their (earliest) timestamp.
INSERT INTO {database}.usage_claims (account_id, meter_id, record_id, ts_ms, claimed_ms)
SELECT account_id, meter_id, record_id, min(ts_ms), toInt64(0) FROM {database}.usage_records
GROUP BY account_id, meter_id, record_id;
