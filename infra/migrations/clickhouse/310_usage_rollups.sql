-- Hourly rollups of usage records (docs/design.md §10, README "Usage rollups"). One row per (account, meter, hour,
-- dimension set) holding every aggregate docs/design.md §8 needs, so a read costs O(windows), not O(records).
-- A row is never updated in place: a touched hour is recomputed from its deduplicated raw rows (FINAL) and
-- inserted again with `version` = the number of distinct records the recompute saw. Records are only ever
-- added, so a later snapshot of an hour holds a superset of an earlier one: the higher version is the more
-- complete row, whichever process wrote it and whatever its clock said. Equal versions hold equal sets.
-- `group_key` is the record's dimension set (issue 18), '' for records without dimensions (all of them today):
-- a total is the sum over group keys, a group-by read merges the keys it names.
-- `quantiles` is a mergeable t-digest state: windows and totals merge hours with quantilesTDigestMerge.
CREATE TABLE IF NOT EXISTS {database}.usage_hourly (
  account_id  String,
  meter_id    String,
  hour        Int64,
  group_key   String,
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
PARTITION BY toYYYYMM(toDateTime(hour * 3600, 'UTC'))
ORDER BY (account_id, meter_id, hour, group_key);

-- Which (account, meter) had records inserted in which hour: the rollup sweeper's work list when an hour
-- closes. Filled by the materialized view below as part of every INSERT into usage_records (so it is
-- visible exactly when the records are, whoever inserted them: the consumer or a bulk load).
CREATE TABLE IF NOT EXISTS {database}.usage_hours_touched (
  hour        Int64,
  account_id  String,
  meter_id    String
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(hour * 3600, 'UTC'))
ORDER BY (hour, account_id, meter_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS {database}.usage_hours_touched_mv TO {database}.usage_hours_touched AS
SELECT intDiv(ts_ms, 3600000) AS hour, account_id, meter_id
FROM {database}.usage_records
GROUP BY hour, account_id, meter_id;

-- Hours the sweeper has rolled up (every hour up to max(hour) is done). Readers take rollups for hours up to
-- it and raw rows after it.
CREATE TABLE IF NOT EXISTS {database}.usage_rollup_sweeps (
  hour        Int64,
  swept_ms    Int64
) ENGINE = ReplacingMergeTree(swept_ms)
ORDER BY hour;

-- Records inserted before this migration: note their hours, so the sweeper rolls them up on first start.
INSERT INTO {database}.usage_hours_touched
SELECT DISTINCT intDiv(ts_ms, 3600000) AS hour, account_id, meter_id FROM {database}.usage_records;
