-- Test clocks (issue 30, docs/test-clocks.md): a simulated time that some customers live at. The operator
-- account that made a clock owns it (account_id); its customers are accounts whose test_clock_id names it.
-- Their periods, invoices and payment attempts happen at the clock's frozen_time, which only moves forward
-- (POST /v1/test_clocks/{id}/advance runs the billing engine at each instant something falls due on the way);
-- the billing role's own runs, at real time, leave them out. Additive only (docs/operations.md, migration compat).
CREATE TABLE test_clocks (
  id          text PRIMARY KEY,                                    -- clock_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name        text,
  frozen_time timestamptz NOT NULL,
  -- 'advancing' while an advance runs (and after a crashed one, until the advance is repeated).
  status      text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'advancing')),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX test_clocks_account_newest ON test_clocks (account_id, created_at DESC, id DESC);

-- A customer on a clock; NULL (every account until attached) lives at real time. A clock with customers
-- cannot be deleted (RESTRICT: the API answers 409 test_clock_in_use before it gets here).
ALTER TABLE accounts ADD COLUMN test_clock_id text REFERENCES test_clocks(id) ON DELETE RESTRICT;
-- "Which accounts are on a clock?" — the billing engine's scope of a run (services/domain/billing/scope.ts).
CREATE INDEX accounts_test_clock ON accounts (test_clock_id) WHERE test_clock_id IS NOT NULL;
