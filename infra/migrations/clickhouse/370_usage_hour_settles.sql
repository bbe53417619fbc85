-- Settled hours (issue 27, shared/usage/hour-marks.ts, docs/design.md §10): a late record no longer recomputes
-- its hour on insert (a cost of the whole hour per batch: quadratic in a backfill); it marks the hour, and the hour
-- is recomputed once it has gone quiet (or doubled since its last recompute). Readers take a marked hour raw
-- until a recompute has covered every mark, so reads stay exact whatever is pending.
--
-- `usage_hour_marks`: per (account, meter, hour), how many inserts touched it and how many rows they carried.
-- Each consumer insert adds one row per hour it touches BEFORE inserting the rows, holding the account's settle
-- lock shared (services/roles/consumer/account-locks.ts); summed by the engine and by every reader.
CREATE TABLE IF NOT EXISTS {database}.usage_hour_marks (
  account_id  String,
  meter_id    String,
  hour        Int64,
  touched     UInt64,
  records     UInt64
) ENGINE = SummingMergeTree()
ORDER BY (account_id, meter_id, hour);

-- `usage_hour_settles`: the marks a recompute covered. Written after the recompute, holding the account's settle
-- lock exclusively (no insert of the account in flight), with the marks it counted first: an hour is settled
-- while its marks' `touched` is at most the highest settle's.
CREATE TABLE IF NOT EXISTS {database}.usage_hour_settles (
  account_id  String,
  meter_id    String,
  hour        Int64,
  touched     UInt64,
  records     UInt64,
  settled_ms  Int64
) ENGINE = ReplacingMergeTree(touched)
ORDER BY (account_id, meter_id, hour);

-- `usage_hour_touches`: the settler's work list — which hours were marked in which second (written with the marks).
CREATE TABLE IF NOT EXISTS {database}.usage_hour_touches (
  second      Int64,
  account_id  String,
  meter_id    String,
  hour        Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY intDiv(second, 86400 * 7)
ORDER BY (second, account_id, meter_id, hour);

-- Hours not swept yet when this migration ran: marked, so readers take them raw until they are settled (by the
-- settler, which finds them in the work list, or by their sweep).
INSERT INTO {database}.usage_hour_touches (second, account_id, meter_id, hour)
SELECT toInt64(toUInt32(now())), account_id, meter_id, hour FROM {database}.usage_hours_touched
WHERE hour > (SELECT max(hour) FROM {database}.usage_rollup_sweeps) GROUP BY account_id, meter_id, hour;
INSERT INTO {database}.usage_hour_marks (account_id, meter_id, hour, touched, records)
SELECT account_id, meter_id, hour, toUInt64(1), toUInt64(0) FROM {database}.usage_hours_touched
WHERE hour > (SELECT max(hour) FROM {database}.usage_rollup_sweeps) GROUP BY account_id, meter_id, hour;
