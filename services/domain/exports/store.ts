import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { appendEvent } from '../events/outbox-store.js';
import type { EventData } from '../../../shared/api/events.js';
import type { ExportRow, ExportScheduleRow, NewExport, NewExportSchedule } from './types.js';

/**
 * Exports' SQL (docs/exports.md): the export rows the runner claims and completes, and the schedules that add
 * one row per due window. Every API read is scoped to the operator's account.
 */
const COLUMNS = `id, account_id, schedule_id, kind, format, window_start, window_end, destination, status, attempts,
  object_key, row_count::text AS row_count, byte_count::text AS byte_count, sha256, error, created_at, completed_at`;
const SCHEDULE_COLUMNS = 'id, account_id, kind, format, interval, destination, starts_at, created_at';

/** How long a runner's claim holds; a longer export renews it after each page. */
export const CLAIM_SECONDS = 300;
/** Attempts before an export is `failed` for good. */
export const MAX_ATTEMPTS = 3;

const notFound = (id: string) => new NotFoundError(`No export ${id}.`);
const scheduleNotFound = (id: string) => new NotFoundError(`No export schedule ${id}.`);

export async function insertExport(pool: PgPool, accountId: string, e: NewExport): Promise<ExportRow> {
  const { rows } = await pool.query<ExportRow>(
    `INSERT INTO exports (id, account_id, kind, format, window_start, window_end, destination)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [newId('exp'), accountId, e.kind, e.format, e.from, e.to, JSON.stringify(e.destination)],
  );
  return rows[0]!;
}

export async function getExport(pool: PgPool, accountId: string, id: string): Promise<ExportRow> {
  if (!hasPrefix(id, 'exp')) throw notFound(id);
  const { rows } = await pool.query<ExportRow>(`SELECT ${COLUMNS} FROM exports WHERE id = $1 AND account_id = $2`, [
    id,
    accountId,
  ]);
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

export async function listExports(
  pool: PgPool,
  accountId: string,
  window: RowWindow,
  scheduleId?: string,
): Promise<{ rows: ExportRow[]; total: number }> {
  const params: unknown[] = [accountId];
  let where = 'account_id = $1';
  if (scheduleId !== undefined) {
    params.push(scheduleId);
    where += ' AND schedule_id = $2';
  }
  return selectPage<ExportRow>(
    pool,
    { columns: COLUMNS, from: 'exports', where, params, orderBy: 'created_at DESC, id DESC' },
    window,
  );
}

/**
 * Claims the oldest export due: pending, or running with a lapsed claim (its runner crashed). SKIP LOCKED: two
 * billing processes never take the same one.
 */
export async function claimDueExport(pool: PgPool): Promise<ExportRow | null> {
  const { rows } = await pool.query<ExportRow>(
    `UPDATE exports SET status = 'running', attempts = attempts + 1, error = NULL,
            claimed_until = now() + make_interval(secs => $1)
      WHERE id = (SELECT id FROM exports
                   WHERE status = 'pending' OR (status = 'running' AND claimed_until < now())
                   ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [CLAIM_SECONDS],
  );
  return rows[0] ?? null;
}

/**
 * A claim is (id, attempts): once a claim lapsed and another runner took the export, the first runner's renewals,
 * completion and failure match nothing.
 */
const CLAIMED = `id = $1 AND attempts = $2 AND status = 'running'`;

/** Keeps a long export's claim while it makes progress. */
export async function renewClaim(pool: PgPool, id: string, attempt: number): Promise<void> {
  await pool.query(`UPDATE exports SET claimed_until = now() + make_interval(secs => $3) WHERE ${CLAIMED}`, [
    id,
    attempt,
    CLAIM_SECONDS,
  ]);
}

/** Completes an export and appends its export.completed event in one transaction. */
export async function completeExport(
  pool: PgPool,
  id: string,
  attempt: number,
  result: { objectKey: string; rows: number; bytes: number; sha256: string },
  event: (row: ExportRow) => EventData<'export.completed'>,
): Promise<ExportRow> {
  return withTransaction(pool, async (c: PgClient) => {
    const { rows } = await c.query<ExportRow>(
      `UPDATE exports SET status = 'completed', object_key = $3, row_count = $4, byte_count = $5, sha256 = $6,
              claimed_until = NULL, completed_at = now()
        WHERE ${CLAIMED} RETURNING ${COLUMNS}`,
      [id, attempt, result.objectKey, result.rows, result.bytes, result.sha256],
    );
    const row = rows[0];
    if (!row) throw new ConflictError(`Export ${id} was taken by another runner (its claim lapsed).`, 'claim_lost');
    await appendEvent(c, { accountId: row.account_id, type: 'export.completed', data: event(row) });
    return row;
  });
}

/** A failed run: pending again until MAX_ATTEMPTS, then `failed` with the reason. */
export async function failExport(pool: PgPool, id: string, attempt: number, reason: string): Promise<void> {
  await pool.query(
    `UPDATE exports SET status = CASE WHEN attempts >= $4 THEN 'failed' ELSE 'pending' END, error = $3,
            claimed_until = NULL
      WHERE ${CLAIMED}`,
    [id, attempt, reason.slice(0, 1000), MAX_ATTEMPTS],
  );
}

export async function insertSchedule(
  pool: PgPool,
  accountId: string,
  s: NewExportSchedule,
): Promise<ExportScheduleRow> {
  const { rows } = await pool.query<ExportScheduleRow>(
    `INSERT INTO export_schedules (id, account_id, kind, format, interval, destination, starts_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${SCHEDULE_COLUMNS}`,
    [newId('exps'), accountId, s.kind, s.format, s.interval, JSON.stringify(s.destination), s.startsAt],
  );
  return rows[0]!;
}

export async function getSchedule(pool: PgPool, accountId: string, id: string): Promise<ExportScheduleRow> {
  if (!hasPrefix(id, 'exps')) throw scheduleNotFound(id);
  const { rows } = await pool.query<ExportScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM export_schedules WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  if (!rows[0]) throw scheduleNotFound(id);
  return rows[0];
}

export async function listSchedules(
  pool: PgPool,
  accountId: string,
  window: RowWindow,
): Promise<{ rows: ExportScheduleRow[]; total: number }> {
  return selectPage<ExportScheduleRow>(
    pool,
    {
      columns: SCHEDULE_COLUMNS,
      from: 'export_schedules',
      where: 'account_id = $1',
      params: [accountId],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

/** Deletes a schedule: no more windows are added; its exports so far stay. */
export async function deleteSchedule(pool: PgPool, accountId: string, id: string): Promise<void> {
  if (!hasPrefix(id, 'exps')) throw scheduleNotFound(id);
  const r = await pool.query('DELETE FROM export_schedules WHERE id = $1 AND account_id = $2', [id, accountId]);
  if (r.rowCount === 0) throw scheduleNotFound(id);
}

/** Every schedule with the start of the window after its latest export (null: none yet). */
export async function schedulesWithProgress(
  pool: PgPool,
): Promise<(ExportScheduleRow & { next_start: Date | null })[]> {
  const { rows } = await pool.query(
    `SELECT ${SCHEDULE_COLUMNS.split(', ')
      .map((c) => `s.${c}`)
      .join(', ')},
            (SELECT max(e.window_end) FROM exports e WHERE e.schedule_id = s.id) AS next_start
       FROM export_schedules s ORDER BY s.id`,
  );
  return rows;
}

/** Adds a schedule's due windows as exports; a window already added is left as it is (unique per schedule). */
export async function insertScheduledExports(
  pool: PgPool,
  s: ExportScheduleRow,
  windows: { from: Date; to: Date }[],
): Promise<number> {
  if (windows.length === 0) return 0;
  const r = await pool.query(
    `INSERT INTO exports (id, account_id, schedule_id, kind, format, window_start, window_end, destination)
     SELECT w.id, $1, $2, $3, $4, w.f, w.t, $5
       FROM unnest($6::text[], $7::timestamptz[], $8::timestamptz[]) AS w(id, f, t)
     ON CONFLICT (schedule_id, window_start) WHERE schedule_id IS NOT NULL DO NOTHING`,
    [
      s.account_id,
      s.id,
      s.kind,
      s.format,
      JSON.stringify(s.destination),
      windows.map(() => newId('exp')),
      windows.map((w) => w.from),
      windows.map((w) => w.to),
    ],
  );
  return r.rowCount ?? 0;
}
