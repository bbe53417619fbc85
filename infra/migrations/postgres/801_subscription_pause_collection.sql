-- Pause collection (issue 44 item 3, docs/billing.md "Pause collection"): since when the subscription's invoicing is
-- paused (null: never paused), and when it last resumed (null: still paused, or never). A period ending in
-- [collection_paused_at, collection_resumed_at) is not invoiced. Expands only: two nullable columns.
ALTER TABLE subscriptions ADD COLUMN collection_paused_at timestamptz, ADD COLUMN collection_resumed_at timestamptz;
