-- Record identities (issue 27, shared/usage/claims.ts, docs/design.md §10): a record is (account, meter, id),
-- whatever its timestamp. One row per identity the consumer stored, with the timestamp it was stored under;
-- kept forever (a few dozen bytes per record, compressed), so a retry that recomputed its timestamp is
-- recognised however late it comes. Keyed by account like the records: on a cluster it lives on the account's
-- shard, where the consumer claims and inserts.
-- Sorted and indexed by `id_hash` (the first 8 bytes of MD5(account \0 meter \0 id), little-endian; the consumer
-- computes the same in JS): a batch's lookup is `PREWHERE id_hash IN (…)`, one 1,024-row granule per id and part,
-- reading only that 8-byte column — never the meter's claims, and record ids (random, as clients make them)
-- cluster no worse than ordered ones. The index is 8 bytes per 1,024 claims.
CREATE TABLE IF NOT EXISTS {database}.usage_claims (
  id_hash     UInt64,
  account_id  String,
  meter_id    String,
  record_id   String,
  ts_ms       Int64,
  claimed_ms  Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (id_hash, account_id, meter_id, record_id)
PRIMARY KEY id_hash
SETTINGS index_granularity = 1024;

-- Records stored before this migration: claimed under their (earliest) timestamp.
INSERT INTO {database}.usage_claims (id_hash, account_id, meter_id, record_id, ts_ms, claimed_ms)
SELECT reinterpretAsUInt64(substring(MD5(concat(account_id, '\0', meter_id, '\0', record_id)), 1, 8)),
  account_id, meter_id, record_id, min(ts_ms), toInt64(0)
FROM {database}.usage_records
GROUP BY account_id, meter_id, record_id;
