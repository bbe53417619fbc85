-- Exports (docs/exports.md): one row per export of a kind and a [from, to) window to a destination. The runner
-- (billing role) claims a pending or crashed-running row, writes the object under a temporary name (a local
-- directory's dot-file, or an S3 multipart upload) and makes it visible only whole; a re-run writes the same
-- bytes to the same object name, so an export is safe to run again.
CREATE TABLE exports (
  id            text PRIMARY KEY,                                  -- exp_…
  account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  schedule_id   text,
  kind          text NOT NULL,
  format        text NOT NULL CHECK (format IN ('csv', 'parquet')),
  window_start  timestamptz NOT NULL,
  window_end    timestamptz NOT NULL,
  destination   jsonb NOT NULL,                                    -- {type: local, path} | {type: s3, bucket, prefix}
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  object_key    text,                                              -- where the finished object is
  row_count     bigint,
  byte_count    bigint,
  sha256        text,
  error         text,
  claimed_until timestamptz,                                       -- a running row whose claim lapsed is re-run
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz,
  CHECK (window_end > window_start)
);
CREATE INDEX exports_account_newest ON exports (account_id, created_at DESC, id DESC);
CREATE INDEX exports_due ON exports (created_at) WHERE status IN ('pending', 'running');

-- Scheduled exports: every whole hour or UTC day since `starts_at` becomes one export row, once.
CREATE TABLE export_schedules (
  id          text PRIMARY KEY,                                    -- exps_…
  account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  kind        text NOT NULL,
  format      text NOT NULL CHECK (format IN ('csv', 'parquet')),
  interval    text NOT NULL CHECK (interval IN ('hourly', 'daily')),
  destination jsonb NOT NULL,
  starts_at   timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX export_schedules_account_newest ON export_schedules (account_id, created_at DESC, id DESC);
ALTER TABLE exports ADD CONSTRAINT exports_schedule_fk FOREIGN KEY (schedule_id) REFERENCES export_schedules(id) ON DELETE SET NULL;
-- A schedule's window is exported once, however many billing processes look at it.
CREATE UNIQUE INDEX exports_schedule_window ON exports (schedule_id, window_start) WHERE schedule_id IS NOT NULL;

-- Exports and their schedules are the operator's doing: audited like every business object (docs/audit.md).
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON exports FOR EACH ROW EXECUTE FUNCTION audit_row_change('export', 'id');
CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON export_schedules FOR EACH ROW EXECUTE FUNCTION audit_row_change('export_schedule', 'id');
