import type { ExportFormat, ExportInterval, ExportKind, ExportStatus } from '../../../shared/vocabulary.js';

/** Where an export's objects go (docs/exports.md): a directory under EXPORTS_LOCAL_ROOT, or an S3 bucket. */
export type ExportDestination = { type: 'local'; path: string } | { type: 's3'; bucket: string; prefix: string };

/** A validated export request: one kind over the window [from, to). */
export interface NewExport {
  kind: ExportKind;
  format: ExportFormat;
  from: Date;
  to: Date;
  destination: ExportDestination;
}

/** An export as stored. Counts come from Postgres bigints as text. */
export interface ExportRow {
  id: string;
  account_id: string;
  schedule_id: string | null;
  kind: ExportKind;
  format: ExportFormat;
  window_start: Date;
  window_end: Date;
  destination: ExportDestination;
  status: ExportStatus;
  attempts: number;
  object_key: string | null;
  row_count: string | null;
  byte_count: string | null;
  sha256: string | null;
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

export interface NewExportSchedule {
  kind: ExportKind;
  format: ExportFormat;
  interval: ExportInterval;
  destination: ExportDestination;
  startsAt: Date;
}

export interface ExportScheduleRow {
  id: string;
  account_id: string;
  kind: ExportKind;
  format: ExportFormat;
  interval: ExportInterval;
  destination: ExportDestination;
  starts_at: Date;
  created_at: Date;
}

/** A column's value in a row: text (decimals too, exact), a whole number, a time, or nothing. */
export type Cell = string | bigint | Date | null;
export type ExportRecord = Record<string, Cell>;
