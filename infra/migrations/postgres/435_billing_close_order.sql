-- The period close takes due subscriptions in (billing_period_start, account_id, id) order
-- (services/domain/billing/close.ts): oldest periods first, and each batch holds few accounts, so batches closing at
-- once rarely wait on each other's credit-grant locks. This index lets each batch read its LIMIT rows in that
-- order instead of sorting every due subscription again.
DROP INDEX subscriptions_billing_due;
CREATE INDEX subscriptions_billing_due ON subscriptions (billing_period_start, account_id, id) WHERE billing_period_start IS NOT NULL;
