-- Usage and spend alerts (issue 28, docs/alerts.md). An alert watches one customer (account_id) or, with
-- account_id NULL, every customer of a deployment meter (an operator's deployment-wide alert). `metric`
-- 'usage' watches a meter's aggregation over the billing period; 'amount' the period's upcoming invoice amount in
-- `currency`. Thresholds are exact decimals, ascending, distinct.
CREATE TABLE alerts (
  id text PRIMARY KEY,
  account_id text REFERENCES accounts (id) ON DELETE CASCADE,
  metric text NOT NULL CHECK (metric IN ('usage', 'amount')),
  meter_id text REFERENCES meters (id) ON DELETE CASCADE,
  currency text,
  thresholds numeric[] NOT NULL CHECK (cardinality(thresholds) BETWEEN 1 AND 20),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((metric = 'usage') = (meter_id IS NOT NULL)),
  CHECK ((metric = 'amount') = (currency IS NOT NULL))
);
CREATE INDEX alerts_account ON alerts (account_id, created_at DESC, id DESC);

-- One row per (alert, customer, threshold, billing period) that fired: written in the transaction of its
-- alert.triggered outbox event, so two evaluators or a re-run after a crash never emit twice.
CREATE TABLE alert_triggers (
  alert_id text NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  threshold numeric NOT NULL,
  period_start timestamptz NOT NULL,
  value numeric NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (alert_id, account_id, period_start, threshold)
);
