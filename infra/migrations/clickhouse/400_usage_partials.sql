-- Partial sums of a hot meter's pending seconds (issue 45 item 2, services/domain/usage/partials.ts, docs/usage.md
-- "Usage rollups"). Until the settler has recomputed a second of the open hour, readers used to scan its raw rows
-- (about 1.5 s of records under sustained ingest). The consumer now writes, after a message's raw rows, one row
-- per (account, meter, second, dimension set) of the records that message stores for the first time — server-
-- assigned ids, and ids it has just claimed (services/domain/usage/claims.ts); a redelivered record or a client's
-- retry is in its first message's partial only. `batch` is the message's stream sequence: a redelivered message
-- writes the same key again, with as many records or fewer (its records are claimed by then), and
-- ReplacingMergeTree(records) keeps the fuller row. Read with FINAL beside the rollups, never after a correction.
-- The consumer drops days before yesterday (the sweeper): only the open hour's seconds are read from here.
CREATE TABLE IF NOT EXISTS {database}.usage_partials (
  account_id  String,
  meter_id    String,
  second      Int64,
  group_key   String,
  batch       UInt64,
  dim_keys    Array(String),
  dim_values  Array(String),
  records     UInt64,
  sum         Decimal(38, 9),
  min         Decimal(38, 9),
  max         Decimal(38, 9),
  last_ts     Int64,
  last_id     String,
  last_value  Decimal(38, 9)
) ENGINE = ReplacingMergeTree(records)
PARTITION BY toYYYYMMDD(toDateTime(second, 'UTC'))
ORDER BY (account_id, meter_id, second, group_key, batch);

-- How many of the inserts that marked a second have stored their partials of it: each adds a row of touched 0 and
-- partial 1 once its partials are in (summed with its mark). A pending second is read from usage_partials only when
-- every insert that marked it did; until then (an insert in flight, one whose partials failed) it is read raw.
ALTER TABLE {database}.usage_hour_marks ADD COLUMN partial UInt64;

-- Which message claimed an identity (its stream sequence; 0: none, e.g. a correction's row): a redelivered message
-- finds its own claims and still counts those records in its partial, and only those.
ALTER TABLE {database}.usage_claims ADD COLUMN batch UInt64;
