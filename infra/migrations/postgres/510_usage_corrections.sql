-- Usage corrections (issue 18, README "Correcting usage"): the log of who cancelled or replaced which records of a
-- meter, and when. A correction is recorded here first (state 'pending'), then applied to ClickHouse
-- (usage_cancellations, replacement rows, the affected hours' rollups), then marked 'applied'. Every step is
-- idempotent, so a correction interrupted half-way is completed by a re-run (the api's pending sweep).
-- Grants: the owner's default privileges give meterline_app this table (infra/stack/postgres.ts).
CREATE TABLE usage_corrections (
  id                text PRIMARY KEY,                                  -- corr_…
  account_id        text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  meter_id          text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('cancel', 'replace')),
  cancel_ids        text[] NOT NULL DEFAULT '{}',                      -- cancel: the record ids named
  replace_start     timestamptz,                                       -- replace: [start, end)
  replace_end       timestamptz,
  replacement_ids   text[] NOT NULL DEFAULT '{}',                      -- replace: ids of the new records
  replacement_rows  text NOT NULL DEFAULT '',                          -- their encoded rows (shared/usage/wire.ts)
  state             text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'applied')),
  created_by_user   text NOT NULL,                                     -- the token's subject
  created_by_client text NOT NULL,                                     -- the token's client
  created_at        timestamptz NOT NULL DEFAULT now(),
  applied_at        timestamptz,
  CHECK ((kind = 'cancel') = (replace_start IS NULL)),
  CHECK (replace_start IS NULL OR replace_start < replace_end)
);
CREATE INDEX usage_corrections_meter_newest ON usage_corrections (account_id, meter_id, created_at DESC, id DESC);
CREATE INDEX usage_corrections_pending ON usage_corrections (created_at) WHERE state = 'pending';
