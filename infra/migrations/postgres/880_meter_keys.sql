-- A meter's key (issue 48): a stable, human-chosen name unique per owner, which the ingest routes accept instead of
-- the `mtr_` id (docs/usage.md "Meters"). Expand-only: a nullable column and a partial unique index. The owner of a
-- deployment meter is the deployment (''), so a deployment key is unique among deployment meters and an account
-- key within its account; an account key may repeat a deployment key (the account's own meter is found first).
ALTER TABLE meters ADD COLUMN key text CHECK (key ~ '^[a-z][a-z0-9_-]{0,63}$' AND key NOT LIKE 'mtr\_%');
CREATE UNIQUE INDEX meters_key_per_owner ON meters ((CASE WHEN scope = 'deployment' THEN '' ELSE account_id END), key)
  WHERE key IS NOT NULL;
