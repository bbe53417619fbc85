-- Meter dimensions and unique counts (issue 18, shared/usage/dimensions.ts). `dimensions`: the keys a meter
-- declares; empty = any keys accepted. Keys may be added, never removed (the store refuses it). `unique_by`:
-- the dimension a counter meter with aggregation unique_count counts distinct values of; fixed at creation.
ALTER TABLE meters ADD COLUMN dimensions text[] NOT NULL DEFAULT '{}';
ALTER TABLE meters ADD COLUMN unique_by text;

DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
            WHERE conrelid = 'meters'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%aggregation%'
  LOOP
    EXECUTE format('ALTER TABLE meters DROP CONSTRAINT %I', c.conname);
  END LOOP;
END $$;

ALTER TABLE meters ADD CONSTRAINT meters_aggregation_check CHECK (
  (type = 'counter' AND aggregation IN ('sum', 'count', 'unique_count')) OR
  (type = 'gauge' AND aggregation IN ('last', 'max', 'min', 'avg')) OR
  (type = 'histogram' AND aggregation IN ('sum', 'count', 'min', 'max', 'avg', 'p50', 'p90', 'p95', 'p99'))
);
ALTER TABLE meters ADD CONSTRAINT meters_unique_by_check CHECK ((aggregation = 'unique_count') = (unique_by IS NOT NULL));
