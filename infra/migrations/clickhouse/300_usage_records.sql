-- Usage records (docs/design.md §10). One row per accepted record; JetStream redelivery and client retries insert
-- the same key again, and ReplacingMergeTree keeps one row per key: queries read with FINAL so duplicates
-- never count twice, merged or not. Times are epoch milliseconds in Int64 (no DateTime64 on 18.16);
-- values are exact decimals (9 places). Works on ClickHouse 18.16 and current releases.
CREATE TABLE IF NOT EXISTS {database}.usage_records (
  account_id  String,
  meter_id    String,
  ts_ms       Int64,
  record_id   String,
  value       Decimal(38, 9),
  received_ms Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(ts_ms, 1000), 'UTC'))
ORDER BY (account_id, meter_id, ts_ms, record_id);
