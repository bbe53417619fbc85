-- The usage database itself is created by the migration runner; tables arrive with the ingestion pipeline (3xx).
SELECT 1;
