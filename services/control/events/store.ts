import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import type { EventType } from './outbox.js';
import type { StoredEvent } from './payload.js';

/** The account's events (outbox_events), newest first, limited to the retention window. */

const COLUMNS = 'id, type, data, created_at';
const WINDOW = `created_at > now() - make_interval(days => $2)`;

export async function listEvents(
  pg: PgPool,
  accountId: string,
  q: { type?: EventType; limit: number; offset: number; retentionDays: number },
): Promise<{ items: StoredEvent[]; total: number }> {
  const params: unknown[] = [accountId, q.retentionDays];
  let where = `account_id = $1 AND ${WINDOW}`;
  if (q.type) {
    params.push(q.type);
    where += ` AND type = $${params.length}`;
  }
  const { rows, total } = await selectPage<StoredEvent>(pg, { columns: COLUMNS, from: 'outbox_events', where, params, orderBy: 'seq DESC' }, { limit: q.limit, offset: q.offset });
  return { items: rows, total };
}

/** Null when the account has no such event within the retention window. */
export async function getEvent(pg: PgPool, accountId: string, id: string, retentionDays: number): Promise<StoredEvent | null> {
  const r = await pg.query<StoredEvent>(`SELECT ${COLUMNS} FROM outbox_events WHERE account_id = $1 AND ${WINDOW} AND id = $3`, [accountId, retentionDays, id]);
  return r.rows[0] ?? null;
}
