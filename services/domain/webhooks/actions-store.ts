import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import type { DeliveryRow, WebhookRow } from './types.js';

/** Webhook actions beyond CRUD: secret rotation and a manual retry. Every query is scoped to the account. */

/** How long the previous secret keeps signing after a rotation (docs/design.md §9). */
export const PREVIOUS_SECRET_HOURS = 24;

/** Makes `secretSealed` current; the old secret signs too for 24 h. NotFoundError when the account has no such webhook. */
export async function rotateWebhookSecret(
  pg: PgPool,
  accountId: string,
  id: string,
  secretSealed: string,
): Promise<WebhookRow> {
  const r = await pg.query<WebhookRow>(
    `UPDATE webhooks
        SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = now() + make_interval(hours => $4),
            secret_sealed = $3, updated_at = now()
      WHERE account_id = $1 AND id = $2
      RETURNING id, url, events, status, created_at, updated_at`,
    [accountId, id, secretSealed, PREVIOUS_SECRET_HOURS],
  );
  const w = r.rows[0];
  if (!w) throw new NotFoundError('No such webhook.');
  return w;
}

const DELIVERY_COLUMNS =
  'id, event_id, event_type, attempt, status, response_status, error, duration_ms, created_at, attempted_at, next_attempt_at';

/**
 * Sends the event of `deliveryId` to its webhook again, now: a retry already scheduled for that event is
 * made due now; otherwise a new attempt (next number) is added, due now. Returns the attempt that will be
 * sent. NotFoundError when the account has no such webhook or delivery; ConflictError `webhook_disabled`.
 */
export async function scheduleManualAttempt(
  pg: PgPool,
  accountId: string,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryRow> {
  return withTransaction(pg, async (c) => {
    const src = await c.query<{ event_id: string; event_type: string; status: string }>(
      `SELECT d.event_id, d.event_type, w.status FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.account_id = $1 AND w.account_id = $1 AND d.webhook_id = $2 AND d.id = $3
        FOR UPDATE OF w`,
      [accountId, webhookId, deliveryId],
    );
    const s = src.rows[0];
    if (!s) throw new NotFoundError('No such delivery of this webhook.');
    if (s.status !== 'enabled')
      throw new ConflictError('The webhook is disabled; enable it first.', 'webhook_disabled');
    const pending = await c.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET next_attempt_at = now()
        WHERE webhook_id = $1 AND event_id = $2 AND status = 'pending'
        RETURNING ${DELIVERY_COLUMNS}`,
      [webhookId, s.event_id],
    );
    if (pending.rows[0]) return pending.rows[0];
    const added = await c.query<DeliveryRow>(
      `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, next_attempt_at)
       SELECT $1, $2, $3, $4, $5, COALESCE(max(attempt), 0) + 1, 'pending', now()
         FROM webhook_deliveries WHERE webhook_id = $2 AND event_id = $4
       RETURNING ${DELIVERY_COLUMNS}`,
      [newId('whd'), webhookId, accountId, s.event_id, s.event_type],
    );
    return added.rows[0]!;
  });
}
