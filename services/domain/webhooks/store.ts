import { reserveQuota } from '../../../shared/limits/quota.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { DeliveryRow, WebhookRow } from './types.js';
import type { EventType } from '../../../shared/vocabulary.js';

/** Webhooks and their deliveries in Postgres; every query is scoped to the account. */

const COLUMNS = 'id, url, events, status, scope, created_at, updated_at';
const noSuchWebhook = () => new NotFoundError('No such webhook.');

/** `maxWebhooks`: the account's quota (409 quota_exceeded); bulk tools (bench, tests) may leave it unbounded. */
export async function insertWebhook(
  pg: PgPool,
  accountId: string,
  w: { url: string; events: string[]; secretSealed: string; scope?: 'account' | 'deployment' },
  maxWebhooks = Number.POSITIVE_INFINITY,
): Promise<WebhookRow> {
  return withTransaction(pg, async (c) => {
    await reserveQuota(c, 'webhooks', accountId, maxWebhooks);
    const r = await c.query<WebhookRow>(
      `INSERT INTO webhooks (id, account_id, url, events, secret_sealed, scope) VALUES ($1, $2, $3, $4::text[], $5, $6) RETURNING ${COLUMNS}`,
      [newId('wh'), accountId, w.url, w.events, w.secretSealed, w.scope ?? 'account'],
    );
    return r.rows[0]!;
  });
}

/** The account's webhooks, newest first. */
export async function listWebhooks(
  pg: PgPool,
  accountId: string,
  window: RowWindow,
): Promise<{ rows: WebhookRow[]; total: number }> {
  return selectPage<WebhookRow>(
    pg,
    { columns: COLUMNS, from: 'webhooks', where: 'account_id = $1', params: [accountId], orderBy: 'seq DESC' },
    window,
  );
}

export async function getWebhook(pg: PgPool, accountId: string, id: string): Promise<WebhookRow> {
  const r = await pg.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE account_id = $1 AND id = $2`, [
    accountId,
    id,
  ]);
  if (!r.rows[0]) throw noSuchWebhook();
  return r.rows[0];
}

/** Changes the given fields (undefined = keep). */
export async function updateWebhook(
  db: PgPool | PgClient,
  accountId: string,
  id: string,
  c: { url?: string; events?: string[]; status?: 'enabled' | 'disabled'; secretSealed?: string },
): Promise<WebhookRow> {
  const r = await db.query<WebhookRow>(
    `UPDATE webhooks
        SET url = COALESCE($3, url), events = COALESCE($4::text[], events), status = COALESCE($5, status),
            secret_sealed = COALESCE($6, secret_sealed), updated_at = now()
      WHERE account_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [accountId, id, c.url ?? null, c.events ?? null, c.status ?? null, c.secretSealed ?? null],
  );
  if (!r.rows[0]) throw noSuchWebhook();
  return r.rows[0];
}

/** Deletes the webhook and its delivery history. */
export async function deleteWebhook(pg: PgPool, accountId: string, id: string): Promise<void> {
  const r = await pg.query('DELETE FROM webhooks WHERE account_id = $1 AND id = $2', [accountId, id]);
  if (r.rowCount !== 1) throw noSuchWebhook();
}

/** Attempts of one webhook, newest first. */
export async function listDeliveries(
  pg: PgPool,
  accountId: string,
  webhookId: string,
  window: RowWindow,
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const owner = await pg.query('SELECT 1 FROM webhooks WHERE account_id = $1 AND id = $2', [accountId, webhookId]);
  if (owner.rowCount !== 1) throw noSuchWebhook();
  return selectPage<DeliveryRow>(
    pg,
    {
      columns:
        'id, event_id, event_type, attempt, status, response_status, error, duration_ms, created_at, attempted_at, next_attempt_at',
      from: 'webhook_deliveries',
      where: 'account_id = $1 AND webhook_id = $2',
      params: [accountId, webhookId],
      orderBy: 'created_at DESC, seq DESC',
    },
    window,
  );
}

/** For delivery: the enabled webhooks of an account subscribed to `eventType`, secrets still sealed. */
export async function subscribedWebhooks(
  db: PgPool | PgClient,
  accountId: string,
  eventType: string,
): Promise<{ id: string; url: string; secret_sealed: string }[]> {
  const r = await db.query<{ id: string; url: string; secret_sealed: string }>(
    `SELECT id, url, secret_sealed FROM webhooks WHERE account_id = $1 AND status = 'enabled' AND events @> ARRAY[$2]::text[] ORDER BY seq`,
    [accountId, eventType],
  );
  return r.rows;
}

/**
 * Whether the account has an enabled webhook subscribed to `type`; `deploymentKey` instead of an account asks
 * whether a deployment webhook (operator mode) is.
 */
export async function hasEnabledSubscriber(
  client: PgClient,
  accountId: string,
  type: EventType,
  deploymentKey: string,
): Promise<boolean> {
  const r = await client.query<{ subscribed: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhooks WHERE (account_id = $1 OR ($1 = $3 AND scope = 'deployment'))
                                              AND status = 'enabled' AND events @> ARRAY[$2]::text[]) AS subscribed`,
    [accountId, type, deploymentKey],
  );
  return r.rows[0]!.subscribed;
}

/** The accounts with an enabled webhook subscribed to `type`, and `deploymentKey` when a deployment webhook is. */
export async function accountsWithEnabledSubscribers(
  pg: PgPool,
  type: EventType,
  deploymentKey: string,
): Promise<string[]> {
  const r = await pg.query<{ account_id: string }>(
    `SELECT DISTINCT CASE WHEN scope = 'deployment' THEN $2 ELSE account_id END AS account_id FROM webhooks
      WHERE status = 'enabled' AND events @> ARRAY[$1]::text[]`,
    [type, deploymentKey],
  );
  return r.rows.map((x) => x.account_id);
}

/** Serialises the syncs of one account's usage-subscriber entry (usage-subscribers.ts): an advisory lock until commit. */
export async function lockUsageSubscriberSync(client: PgClient, accountId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhook-usage:${accountId}`]);
}
