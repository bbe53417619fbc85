-- A customer's wallet settings (issue 44 item 4, docs/credits.md "Auto-recharge and low-balance alert"), in one
-- currency: auto-recharge (below `recharge_threshold`, buy `recharge_amount`, at most `max_recharges_per_month`
-- top-ups a calendar month, one in flight at a time: credit_top_ups_one_auto_in_flight) and the low-balance alert
-- (`credit.balance_low` once per dip below `low_balance_threshold`). The billing run acts on them after its spends.
CREATE TABLE credit_wallet_settings (
  account_id              text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  currency                text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  auto_recharge_enabled   boolean NOT NULL DEFAULT false,
  recharge_threshold      numeric CHECK (recharge_threshold >= 0),
  recharge_amount         numeric CHECK (recharge_amount > 0),
  max_recharges_per_month integer CHECK (max_recharges_per_month >= 1),
  low_balance_threshold   numeric CHECK (low_balance_threshold >= 0),
  -- credit.balance_low was sent for the current dip; cleared once the balance is back at or above the threshold.
  low_balance_notified    boolean NOT NULL DEFAULT false,
  -- The last automatic top-up failed: auto-recharge waits until the settings are saved again or credit is bought.
  last_failure_code       text,
  last_failure_at         timestamptz,
  updated_at              timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT auto_recharge_enabled OR (recharge_threshold IS NOT NULL AND recharge_amount IS NOT NULL AND max_recharges_per_month IS NOT NULL))
);
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON credit_wallet_settings FOR EACH ROW EXECUTE FUNCTION audit_row_change('credit_wallet_settings', 'account_id');
