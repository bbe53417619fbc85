-- Exact unique counts from rollups (issue 18; services/domain/usage/unique-rollups-store.ts, README "Usage rollups").
-- `usage_unique_meters`: the unique_count meters whose hours carry a distinct-set state, and the dimension they
-- count (a meter's unique_by never changes). Written when such a meter is created, before Postgres commits it
-- and before any ingress knows it, so every record of the meter is rolled up with the state. Meters created
-- before this table existed have no row: their reads keep the older path (a distinct count over usage_hourly).
CREATE TABLE IF NOT EXISTS {database}.usage_unique_meters (
  account_id  String,
  meter_id    String,
  unique_by   String,
  created_ms  Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (account_id, meter_id);

-- One row per (account, meter, hour, set of the OTHER dimensions) of such a meter: records, sum and the exact
-- set of the hour's unique_by values (uniqExact keeps each value's 128-bit hash; values '' — records without
-- the dimension — are left out), so a read merges a few hundred states instead of a row per distinct value, and
-- a day's count is the union of its hours' sets. Written by the same hourly recompute, with the same `version`
-- rule, as usage_hourly (services/domain/usage/rollups-store.ts), so late records, corrections and the sweep apply unchanged.
CREATE TABLE IF NOT EXISTS {database}.usage_unique_hourly (
  account_id  String,
  meter_id    String,
  hour        Int64,
  group_key   String,
  dim_keys    Array(String),
  dim_values  Array(String),
  records     UInt64,
  sum         Decimal(38, 9),
  uniques     AggregateFunction(uniqExactIf, String, UInt8),
  version     UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDateTime(hour * 3600, 'UTC'))
ORDER BY (account_id, meter_id, hour, group_key);
