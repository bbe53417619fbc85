-- Record identities (issue 27, services/domain/usage/claims.ts, docs/design.md §10): a record is (account, meter, id),
-- whatever its timestamp. One row per identity the consumer stored, with the timestamp it was stored under;
-- kept forever (a few dozen bytes per record, compressed), so a retry that recomputed its timestamp is
-- recognised however late it comes. Keyed by account like the records: on a cluster it lives on the account's
-- shard, where the consumer claims and inserts.
-- Indexed by (account, meter, id_hash) — id_hash: the first 8 bytes of MD5(account \0 meter \0 id), computed here —
-- in 256-row granules: a batch's lookup reads, per id and part, one granule of its meter's 8-byte hashes (record
-- ids, random as clients make them, cost the same as ordered ones), never another meter's claims.
CREATE TABLE IF NOT EXISTS {database}.usage_claims (
  account_id  String,
  meter_id    String,
  record_id   String,
  ts_ms       Int64,
  claimed_ms  Int64,
  id_hash     UInt64 DEFAULT reinterpretAsUInt64(substring(MD5(concat(account_id, '\0', meter_id, '\0', record_id)), 1, 8))
) ENGINE = ReplacingMergeTree()
ORDER BY (account_id, meter_id, id_hash, record_id)
PRIMARY KEY (account_id, meter_id, id_hash)
SETTINGS index_granularity = 256;

-- Records stored before this migration: claimed under their (earliest) timestamp.
INSERT INTO {database}.usage_claims (account_id, meter_id, record_id, ts_ms, claimed_ms)
SELECT account_id, meter_id, record_id, min(ts_ms), toInt64(0) FROM {database}.usage_records
GROUP BY account_id, meter_id, record_id;
