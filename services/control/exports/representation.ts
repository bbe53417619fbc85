import type { ExportRow, ExportScheduleRow } from '../../domain/exports/types.js';

/** An export as the API shows it. */
export function toExport(r: ExportRow) {
  return {
    id: r.id,
    schedule_id: r.schedule_id,
    kind: r.kind,
    format: r.format,
    from: r.window_start.toISOString(),
    to: r.window_end.toISOString(),
    destination: r.destination,
    status: r.status,
    attempts: r.attempts,
    object_key: r.object_key,
    row_count: r.row_count === null ? null : Number(r.row_count),
    byte_count: r.byte_count === null ? null : Number(r.byte_count),
    sha256: r.sha256,
    error: r.error,
    created_at: r.created_at.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null,
  };
}

export function toExportSchedule(r: ExportScheduleRow) {
  return {
    id: r.id,
    kind: r.kind,
    format: r.format,
    interval: r.interval,
    destination: r.destination,
    starts_at: r.starts_at.toISOString(),
    created_at: r.created_at.toISOString(),
  };
}
