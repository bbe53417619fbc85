import { reserveQuota } from '../../../shared/limits/quota.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import type { RowWindow } from '../../../shared/http/pagination.js';
import type { Delivery, Webhook } from './schemas.js';

/** Webhooks and their deliveries in Postgres; every query is scoped to the account. */

interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, url, events, status, created_at, updated_at';

function toApi(r: WebhookRow): Webhook {
  return { id: r.id, url: r.url, events: r.events, status: r.status, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

/** Null when the account doesn't exist. */
export async function insertWebhook(pg: PgPool, accountId: string, w: { url: string; events: string[]; secretSealed: string }, maxWebhooks = Number.POSITIVE_INFINITY): Promise<Webhook | null> {
  return withTransaction(pg, async (c) => {
    if (!(await reserveQuota(c, 'webhooks', accountId, maxWebhooks))) return null;
    const r = await c.query<WebhookRow>(
      `INSERT INTO webhooks (id, account_id, url, events, secret_sealed) VALUES ($1, $2, $3, $4::text[], $5) RETURNING ${COLUMNS}`,
      [newId('wh'), accountId, w.url, w.events, w.secretSealed],
    );
    return toApi(r.rows[0]!);
  });
}

export async function listWebhooks(pg: PgPool, accountId: string, window: RowWindow): Promise<{ data: Webhook[]; total: number }> {
  const { rows, total } = await selectPage<WebhookRow>(pg, { columns: COLUMNS, from: 'webhooks', where: 'account_id = $1', params: [accountId], orderBy: 'seq DESC' }, window);
  return { data: rows.map(toApi), total };
}

export async function getWebhook(pg: PgPool, accountId: string, id: string): Promise<Webhook | null> {
  const r = await pg.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return r.rows[0] ? toApi(r.rows[0]) : null;
}

/** Changes the given fields (undefined = keep). Null when the account has no such webhook. */
export async function updateWebhook(
  db: PgPool | PgClient,
  accountId: string,
  id: string,
  c: { url?: string; events?: string[]; status?: 'enabled' | 'disabled'; secretSealed?: string },
): Promise<Webhook | null> {
  const r = await db.query<WebhookRow>(
    `UPDATE webhooks
        SET url = COALESCE($3, url), events = COALESCE($4::text[], events), status = COALESCE($5, status),
            secret_sealed = COALESCE($6, secret_sealed), updated_at = now()
      WHERE account_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [accountId, id, c.url ?? null, c.events ?? null, c.status ?? null, c.secretSealed ?? null],
  );
  return r.rows[0] ? toApi(r.rows[0]) : null;
}

/** Deletes the webhook and its delivery history. False when the account has no such webhook. */
export async function deleteWebhook(pg: PgPool, accountId: string, id: string): Promise<boolean> {
  const r = await pg.query('DELETE FROM webhooks WHERE account_id = $1 AND id = $2', [accountId, id]);
  return r.rowCount === 1;
}

interface DeliveryRow extends Omit<Delivery, 'created_at' | 'next_attempt_at'> {
  created_at: Date;
  next_attempt_at: Date | null;
}

/** Attempts of one webhook, newest first; null when the account has no such webhook. */
export async function listDeliveries(
  pg: PgPool,
  accountId: string,
  webhookId: string,
  window: RowWindow,
): Promise<{ data: Delivery[]; total: number } | null> {
  const owner = await pg.query('SELECT 1 FROM webhooks WHERE account_id = $1 AND id = $2', [accountId, webhookId]);
  if (owner.rowCount !== 1) return null;
  const { rows, total } = await selectPage<DeliveryRow>(
    pg,
    {
      columns: 'id, event_id, event_type, attempt, status, response_status, error, duration_ms, created_at, next_attempt_at',
      from: 'webhook_deliveries',
      where: 'account_id = $1 AND webhook_id = $2',
      params: [accountId, webhookId],
      orderBy: 'created_at DESC, seq DESC',
    },
    window,
  );
  return {
    data: rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), next_attempt_at: r.next_attempt_at ? r.next_attempt_at.toISOString() : null })),
    total,
  };
}

/** For delivery: the enabled webhooks of an account subscribed to `eventType`, secrets still sealed. */
export async function subscribedWebhooks(db: PgPool | PgClient, accountId: string, eventType: string): Promise<{ id: string; url: string; secret_sealed: string }[]> {
  const r = await db.query<{ id: string; url: string; secret_sealed: string }>(
    `SELECT id, url, secret_sealed FROM webhooks WHERE account_id = $1 AND status = 'enabled' AND events @> ARRAY[$2]::text[] ORDER BY seq`,
    [accountId, eventType],
  );
  return r.rows;
}
