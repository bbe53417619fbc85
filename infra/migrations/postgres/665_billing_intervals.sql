-- Billing periods by interval and anchor, trials, advance invoices (issue 29; docs/billing.md "Billing periods",
-- "Trials"). The rules themselves are in services/domain/subscriptions/periods.ts; the database stores where each
-- subscription's billing stands.
ALTER TABLE subscriptions
  ADD COLUMN "interval" text NOT NULL DEFAULT 'month' CHECK ("interval" IN ('day', 'week', 'month', 'quarter', 'year')),
  ADD COLUMN interval_count integer NOT NULL DEFAULT 1 CHECK (interval_count BETWEEN 1 AND 12),
  ADD COLUMN billing_anchor text NOT NULL DEFAULT 'calendar' CHECK (billing_anchor IN ('calendar', 'start')),
  -- Nothing is billed before it; the first period is the one containing it.
  ADD COLUMN trial_end timestamptz,
  -- When subscription.trial_will_end was appended to the outbox (once, 3 days before trial_end).
  ADD COLUMN trial_will_end_at timestamptz,
  -- The end of the period at billing_period_start (written with it by the close): due once it + the grace is past.
  ADD COLUMN billing_period_end timestamptz,
  -- Periods longer than a month bill their flat items in advance: the start of the next such period not yet
  -- invoiced (reason 'advance'); NULL for the other subscriptions, and once a canceled one has none left.
  ADD COLUMN advance_period_start timestamptz,
  ADD COLUMN advance_period_end timestamptz;

-- Rows written without an end (before this migration, or by a statement that sets only billing_period_start) are
-- calendar-anchored: their period is [start, start + interval_count intervals). Anniversary periods always have their
-- end written by the application (a clamped day of the month is not start + n months).
CREATE FUNCTION calendar_period_end(start timestamptz, iv text, n integer) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
  SELECT ((start AT TIME ZONE 'UTC') + CASE iv WHEN 'day' THEN make_interval(days => n) WHEN 'week' THEN make_interval(weeks => n)
          WHEN 'month' THEN make_interval(months => n) WHEN 'quarter' THEN make_interval(months => 3 * n)
          ELSE make_interval(years => n) END) AT TIME ZONE 'UTC'
$$;
UPDATE subscriptions SET billing_period_end = calendar_period_end(billing_period_start, 'month', 1) WHERE billing_period_start IS NOT NULL;

CREATE OR REPLACE FUNCTION subscriptions_billing_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND NEW.billing_period_start IS NULL THEN
    NEW.billing_period_start := date_trunc('month', NEW.created_at, 'UTC');
  END IF;
  IF NEW.billing_period_start IS NOT NULL AND (NEW.billing_period_end IS NULL OR
     (TG_OP = 'UPDATE' AND NEW.billing_period_start IS DISTINCT FROM OLD.billing_period_start
                       AND NEW.billing_period_end IS NOT DISTINCT FROM OLD.billing_period_end)) THEN
    NEW.billing_period_end := calendar_period_end(NEW.billing_period_start, NEW."interval", NEW.interval_count);
  END IF;
  IF NEW.billing_period_start IS NULL THEN
    NEW.billing_period_end := NULL;
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER subscriptions_billing_start ON subscriptions;
CREATE TRIGGER subscriptions_billing_start BEFORE INSERT OR UPDATE ON subscriptions
  FOR EACH ROW EXECUTE FUNCTION subscriptions_billing_start();

-- "Which subscriptions have a period due?" — billing_period_end + grace ≤ now.
CREATE INDEX subscriptions_period_end_due ON subscriptions (billing_period_end, account_id, id) WHERE billing_period_end IS NOT NULL;
CREATE INDEX subscriptions_advance_due ON subscriptions (advance_period_start) WHERE advance_period_start IS NOT NULL;
CREATE INDEX subscriptions_trial_notice_due ON subscriptions (trial_end) WHERE trial_end IS NOT NULL AND trial_will_end_at IS NULL;

-- Advance invoices: one per (subscription, period), as period invoices.
ALTER TABLE invoices DROP CONSTRAINT invoices_reason_check;
ALTER TABLE invoices ADD CONSTRAINT invoices_reason_check CHECK (reason IN ('period', 'threshold', 'advance'));
CREATE UNIQUE INDEX invoices_one_advance_per_period ON invoices (subscription_id, period_start) WHERE reason = 'advance';
