-- A plan change scheduled for the period's end may name another plan (issue 44: a downgrade from the customer
-- portal or POST /v1/subscriptions/{id}/plan_change). Expands only: a nullable column. NULL: the subscription's own
-- plan, as every scheduled change was before (plan migrations). Read only together with pending_plan_version; every
-- writer of pending_plan_version writes it too.
ALTER TABLE subscriptions ADD COLUMN pending_plan_id text REFERENCES plans(id);
