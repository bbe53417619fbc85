import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { AuditEventRow, AuditFilter } from './types.js';

/**
 * The audit log's SQL (docs/audit.md). Rows are written only by the audit trigger, in the transaction of the
 * change they record (infra/migrations/postgres/741_audit_log.sql); this file reads them and purges old ones.
 */

const COLUMNS = `id, occurred_at, resource_type, resource_id, action, actor_type, actor_account_id, actor_user_id,
  actor_client_id, actor_token_id, actor_role, actor_address, actor_name, request_id, operation, before, after`;

/** The deployment's audit events matching every given filter exactly, newest first. */
export async function listAuditEvents(
  pg: PgPool,
  filter: AuditFilter,
  window: RowWindow,
): Promise<{ rows: AuditEventRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.resourceId !== undefined) add((n) => `resource_id = ${n}`, filter.resourceId);
  if (filter.resourceType !== undefined) add((n) => `resource_type = ${n}`, filter.resourceType);
  if (filter.actor !== undefined)
    add((n) => `(actor_user_id = ${n} OR actor_client_id = ${n} OR actor_token_id = ${n})`, filter.actor);
  if (filter.from !== undefined) add((n) => `occurred_at >= ${n}`, filter.from);
  if (filter.to !== undefined) add((n) => `occurred_at < ${n}`, filter.to);
  return selectPage<AuditEventRow>(
    pg,
    {
      columns: COLUMNS,
      from: 'audit_events',
      where: where.length ? where.join(' AND ') : 'true',
      params,
      orderBy: 'seq DESC',
    },
    window,
  );
}

/**
 * Deletes audit events older than `keepDays` days: the one deletion the log's append-only trigger lets
 * through, and only for this transaction and rows older than the retention it names. Returns how many went.
 */
export async function purgeAuditEvents(pg: PgPool, keepDays: number): Promise<number> {
  return withTransaction(pg, async (c) => {
    await c.query("SELECT set_config('meterline.audit_purge', $1, true)", [String(keepDays)]);
    const r = await c.query('DELETE FROM audit_events WHERE occurred_at < now() - make_interval(days => $1::integer)', [
      keepDays,
    ]);
    return r.rowCount ?? 0;
  });
}
