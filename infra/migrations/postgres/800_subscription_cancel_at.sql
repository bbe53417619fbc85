-- Cancel at the period's end (issue 44 item 3, docs/billing.md "Cancel at the period's end"): the instant a
-- subscription is scheduled to cancel, the end of the period it was in when the cancellation was asked for; null:
-- none scheduled. The billing run cancels every active subscription whose cancel_at has come (canceled_at =
-- cancel_at), before it closes that last period. Expands only: a nullable column, a partial index for the run.
ALTER TABLE subscriptions ADD COLUMN cancel_at timestamptz;
CREATE INDEX subscriptions_cancel_at ON subscriptions (cancel_at) WHERE cancel_at IS NOT NULL AND status = 'active';
