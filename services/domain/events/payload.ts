import type { EventType } from '../../../shared/vocabulary.js';

/** An event as stored (outbox_events) and as customers see it. */
export interface StoredEvent {
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface CustomerEvent {
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: string;
}

/**
 * The payload `{id, type, data, created_at}` (docs/design.md §9): the webhook request body and the shape of
 * GET /v1/events, so a receiver that was down can reconcile. jsonb hands `data` back with its keys in one
 * canonical order, so every attempt of an event sends the same bytes.
 */
export function customerEvent(e: StoredEvent): CustomerEvent {
  return { id: e.id, type: e.type, data: e.data, created_at: e.created_at.toISOString() };
}
