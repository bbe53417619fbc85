-- Foundation. Migration number ranges by area: 0xx foundation, 1xx oauth/accounts, 2xx control plane,
-- 3xx ingestion, 4xx billing and webhooks.
SELECT 1;
