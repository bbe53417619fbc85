import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { stringifyJson } from '../../../shared/money/json.js';
import type { EventData } from '../../../shared/api/events.js';
import type { EventType } from '../../../shared/vocabulary.js';
import { EVENT_ROW_DAYS } from './retention.js';

/**
 * The transactional outbox (outbox_events): events are appended in the transaction of the change they
 * describe; the dispatcher's relay (services/roles/dispatcher/outbox-relay.ts) publishes them to the EVENTS
 * stream in seq order and marks them published; published rows are deleted after their retention.
 */

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
export async function appendEvent(client: PgClient, e: NewEvent): Promise<string> {
  return (await appendEvents(client, [e]))[0]!;
}

/** An event to append: its data checked by the compiler against its type's schema (shared/api/events.ts). */
export type NewEvent = { [T in EventType]: NewEventOf<T> }[EventType];
export interface NewEventOf<T extends EventType> {
  accountId: string;
  type: T;
  /** May hold JsonDecimal money: stored digit for digit. */
  data: EventData<T>;
}

/**
 * What every event's data says about its customer (docs/design.md §9, operator mode): `customer_id`, and
 * `external_id` when the customer has one — so a deployment webhook receiving every customer's events knows
 * whose each is. SQL over `accounts a` (left-joined on the event's account).
 */
export const CUSTOMER_FIELDS_SQL = `jsonb_build_object('customer_id', a.customer_id)
  || CASE WHEN a.external_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('external_id', a.external_id) END`;

/** Many events in one statement (the billing run writes thousands per transaction); ids in input order. */
export async function appendEvents(client: PgClient, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('evt'));
  await client.query(
    `INSERT INTO outbox_events (id, account_id, type, data)
     SELECT e.id, e.account_id, e.type, e.data || ${CUSTOMER_FIELDS_SQL}
       FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[]) WITH ORDINALITY AS e(id, account_id, type, data, ord)
       LEFT JOIN accounts a ON a.id = e.account_id
      ORDER BY ord`,
    [ids, events.map((e) => e.accountId), events.map((e) => e.type), events.map((e) => stringifyJson(e.data))],
  );
  return ids;
}

/** An unpublished event as the relay reads it. */
export interface OutboxRow {
  id: string;
  account_id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

/** The oldest unpublished events, locked for the caller's transaction (SKIP LOCKED: concurrent relays take different batches). */
export async function lockUnpublishedEvents(client: PgClient, limit: number): Promise<OutboxRow[]> {
  const { rows } = await client.query<OutboxRow>(
    `SELECT id, account_id, type, data, created_at FROM outbox_events
      WHERE published_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows;
}

export async function markEventsPublished(client: PgClient, ids: string[]): Promise<void> {
  await client.query('UPDATE outbox_events SET published_at = now() WHERE id = ANY($1::text[])', [ids]);
}

/** Deletes published events past their retention (EVENT_ROW_DAYS). */
export async function purgePublishedEvents(pg: PgPool): Promise<void> {
  await pg.query(
    `DELETE FROM outbox_events WHERE published_at IS NOT NULL AND created_at < now() - make_interval(days => $1)`,
    [EVENT_ROW_DAYS],
  );
}

/** One `meter.usage.recorded` event to append; `value` the exact decimal text, `timestamp` ISO 8601. */
export interface UsageEvent {
  id: string;
  accountId: string;
  meterId: string;
  recordId: string;
  value: string;
  timestamp: string;
}

/**
 * `meter.usage.recorded` events, `{meter_id, usage_id, value, timestamp}`; an id already in the outbox (a
 * redelivered message) is skipped. Returns how many were appended.
 */
export async function appendUsageEvents(
  pg: PgPool,
  type: 'meter.usage.recorded',
  events: UsageEvent[],
): Promise<number> {
  const r = await pg.query(
    `INSERT INTO outbox_events (id, account_id, type, data)
     SELECT x.id, x.acct, $6, jsonb_build_object('meter_id', m, 'usage_id', u, 'value', v::numeric, 'timestamp', ts) || ${CUSTOMER_FIELDS_SQL}
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $7::text[]) AS x(id, acct, m, u, v, ts)
       LEFT JOIN accounts a ON a.id = x.acct
     ON CONFLICT (id) DO NOTHING`,
    [
      events.map((e) => e.id),
      events.map((e) => e.accountId),
      events.map((e) => e.meterId),
      events.map((e) => e.recordId),
      events.map((e) => e.value),
      type,
      events.map((e) => e.timestamp),
    ],
  );
  return r.rowCount ?? 0;
}
