import type { DeliveryRow, WebhookRow } from '../../domain/webhooks/types.js';
import type { Delivery, Webhook } from '../../../shared/api/webhooks.js';

/** The API representation (shared/api/webhooks.ts) of the domain's rows. */

export function toWebhook(r: WebhookRow): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    status: r.status,
    scope: r.scope,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function toDelivery(r: DeliveryRow): Delivery {
  return {
    ...r,
    created_at: r.created_at.toISOString(),
    attempted_at: r.attempted_at ? r.attempted_at.toISOString() : null,
    next_attempt_at: r.next_attempt_at ? r.next_attempt_at.toISOString() : null,
  };
}
