-- Settled hours (issue 27, services/domain/usage/hour-marks.ts, docs/design.md §10): a late record no longer recomputes
-- its hour on insert (a cost of the whole hour per batch: quadratic in a backfill); it marks the hour, and the hour
-- is recomputed once it has gone quiet (or doubled since its last recompute). Readers take a marked hour raw
-- until a recompute has covered every mark, so reads stay exact whatever is pending. An hour still open when
-- marked is marked per minute, and its quiet minutes are recomputed into `usage_minutely`: a hot meter's current
-- hour is then read from minute rollups and only its pending minutes raw.
--
-- `usage_hour_marks`: per (account, meter, hour, minute), how many inserts touched it and how many rows they
-- carried. `minute` is the epoch minute for an hour open when marked, -1 for the whole hour otherwise (records
-- after the hour closed, corrections). Each consumer insert adds its rows BEFORE inserting the records, holding the
-- account's settle lock shared (services/domain/usage/account-locks.ts); summed by the engine and by readers.
CREATE TABLE IF NOT EXISTS {database}.usage_hour_marks (
  account_id  String,
  meter_id    String,
  hour        Int64,
  minute      Int64,
  touched     UInt64,
  records     UInt64
) ENGINE = SummingMergeTree()
ORDER BY (account_id, meter_id, hour, minute);

-- `usage_hour_settles`: the marks a recompute covered, written after it, holding the account's settle lock
-- exclusively (no insert of the account in flight), with the marks it counted first. `minute` -1: the whole hour
-- (`touched` counts every mark of the hour); a minute: that minute's marks, recomputed into usage_minutely.
CREATE TABLE IF NOT EXISTS {database}.usage_hour_settles (
  account_id  String,
  meter_id    String,
  hour        Int64,
  minute      Int64,
  touched     UInt64,
  records     UInt64,
  settled_ms  Int64
) ENGINE = ReplacingMergeTree(touched)
ORDER BY (account_id, meter_id, hour, minute);

-- `usage_hour_touches`: the settler's work list — which hours and minutes were marked in which second.
CREATE TABLE IF NOT EXISTS {database}.usage_hour_touches (
  second      Int64,
  account_id  String,
  meter_id    String,
  hour        Int64,
  minute      Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY intDiv(second, 86400 * 7)
ORDER BY (second, account_id, meter_id, hour, minute);

-- Minute rollups of hours marked while open: usage_hourly's columns per minute, same version rule.
CREATE TABLE IF NOT EXISTS {database}.usage_minutely (
  account_id  String,
  meter_id    String,
  minute      Int64,
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
PARTITION BY toYYYYMM(toDateTime(minute * 60, 'UTC'))
ORDER BY (account_id, meter_id, minute, group_key);

-- Hours not swept yet when this migration ran: marked whole, so readers take them raw until they are settled (by
-- the settler, which finds them in the work list, or by their sweep).
INSERT INTO {database}.usage_hour_touches (second, account_id, meter_id, hour, minute)
SELECT toInt64(toUInt32(now())), account_id, meter_id, hour, toInt64(-1) FROM {database}.usage_hours_touched
WHERE hour > (SELECT max(hour) FROM {database}.usage_rollup_sweeps) GROUP BY account_id, meter_id, hour;
INSERT INTO {database}.usage_hour_marks (account_id, meter_id, hour, minute, touched, records)
SELECT account_id, meter_id, hour, toInt64(-1), toUInt64(1), toUInt64(0) FROM {database}.usage_hours_touched
WHERE hour > (SELECT max(hour) FROM {database}.usage_rollup_sweeps) GROUP BY account_id, meter_id, hour;
