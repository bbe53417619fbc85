-- Unique_count meters created before migration 340 have records but no distinct sets. The backfill
-- (services/domain/usage/unique-backfill.ts, run by every migration pass) registers such a meter with `ready` = 0 —
-- every recompute from then on writes the sets, readers keep the older path — recomputes every hour the meter
-- has records in, then registers it again with `ready` = 1. Readers use the sets only when max(ready) = 1.
-- Meters registered at creation (before they had records) were ready at once: the default.
ALTER TABLE {database}.usage_unique_meters ADD COLUMN ready UInt8 DEFAULT 1;
