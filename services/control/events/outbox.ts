import type { PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';

export const EVENT_TYPES = ['invoice.created', 'invoice.paid', 'payment.failed', 'subscription.updated', 'meter.usage.recorded'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The payload customers receive: `{id, type, data, created_at}`. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  account_id: string;
  data: Record<string, unknown>;
  created_at: string;
}

/**
 * Records an event inside the caller's transaction: it is published if and only if the change commits.
 * Returns the event id (`evt_…`).
 */
export async function appendEvent(client: PgClient, e: { accountId: string; type: EventType; data: Record<string, unknown> }): Promise<string> {
  const id = newId('evt');
  await client.query('INSERT INTO outbox_events (id, account_id, type, data) VALUES ($1, $2, $3, $4)', [id, e.accountId, e.type, JSON.stringify(e.data)]);
  return id;
}
