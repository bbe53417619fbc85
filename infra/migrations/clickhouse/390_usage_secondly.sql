-- Second rollups of a hot meter's open hour (issue 45 item 2, services/domain/usage/hour-marks.ts, docs/usage.md
-- "Usage rollups"). Inserts now mark an open hour per SECOND (the epoch second in the `minute` column of
-- usage_hour_marks / usage_hour_settles / usage_hour_touches: a value in [hour × 3600, (hour + 1) × 3600), never
-- confused with an epoch minute, which lies in [hour × 60, (hour + 1) × 60)). A quiet minute is recomputed into
-- usage_minutely as before (its settle counts every second mark of the minute); a minute still busy has its quiet
-- seconds recomputed into this table, so a read of a meter under sustained ingest takes only its last few seconds
-- raw. Same columns and version rule as usage_hourly, `second` for `hour`.
CREATE TABLE IF NOT EXISTS {database}.usage_secondly (
  account_id  String,
  meter_id    String,
  second      Int64,
  group_key   String,
  dim_keys    Array(String),
  dim_values  Array(String),
  records     UInt64,
  sum         Decimal(38, 9),
  min         Decimal(38, 9),
  max         Decimal(38, 9),
  last_ts     Int64,
  last_id     String,
  last_value  Decimal(38, 9),
  quantiles   AggregateFunction(quantilesTDigest(0.5, 0.9, 0.95, 0.99), Float64),
  version     UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDateTime(second, 'UTC'))
ORDER BY (account_id, meter_id, second, group_key);
