-- Dimensions of usage records (issue 18, shared/usage/dimensions.ts): two parallel arrays, keys sorted, values
-- at the same index (18.16 has neither Map nor JSON). Adding columns is a metadata change: rows stored before
-- read as [] (no dimensions). The rollups carry the same two columns next to `group_key` (an injective text
-- of the dimension set, so ReplacingMergeTree keeps one row per hour and dimension set).
-- 18.16 has no ADD COLUMN IF NOT EXISTS: each ALTER adds its columns at once, and the runner treats
-- "already exists" as done (a re-run after a crash between the ALTER and the version record).
ALTER TABLE {database}.usage_records ADD COLUMN dim_keys Array(String), ADD COLUMN dim_values Array(String);
ALTER TABLE {database}.usage_hourly ADD COLUMN dim_keys Array(String), ADD COLUMN dim_values Array(String);
