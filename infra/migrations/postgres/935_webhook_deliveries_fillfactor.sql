-- Webhook throughput (issue 45): a claim only sets lease_until, which no index holds. With room left on each page
-- Postgres rewrites such a row in place (a HOT update) instead of adding an entry to each of the table's five
-- indexes. Applies to pages written from now on; older pages fill as before. Expand-only.
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
