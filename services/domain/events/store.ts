import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { EventType } from '../../../shared/vocabulary.js';
import type { StoredEvent } from './payload.js';
import { EVENT_RETENTION_DAYS } from './retention.js';

/** The account's events (outbox_events) within the retention window, newest first. */

const COLUMNS = 'id, type, data, created_at';
const WINDOW = `created_at > now() - make_interval(days => $2)`;

export async function listEvents(
  pg: PgPool,
  accountId: string,
  type: EventType | undefined,
  window: RowWindow,
): Promise<{ rows: StoredEvent[]; total: number }> {
  const params: unknown[] = [accountId, EVENT_RETENTION_DAYS];
  let where = `account_id = $1 AND ${WINDOW}`;
  if (type) {
    params.push(type);
    where += ` AND type = $${params.length}`;
  }
  return selectPage<StoredEvent>(
    pg,
    { columns: COLUMNS, from: 'outbox_events', where, params, orderBy: 'seq DESC' },
    window,
  );
}

/** NotFoundError when the account has no such event within the retention window. */
export async function getEvent(pg: PgPool, accountId: string, id: string): Promise<StoredEvent> {
  const r = await pg.query<StoredEvent>(
    `SELECT ${COLUMNS} FROM outbox_events WHERE account_id = $1 AND ${WINDOW} AND id = $3`,
    [accountId, EVENT_RETENTION_DAYS, id],
  );
  if (!r.rows[0]) throw new NotFoundError('No such event.');
  return r.rows[0];
}
