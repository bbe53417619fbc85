import type { PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { stringifyJson } from '../../../shared/money/json.js';

export const EVENT_TYPES = [
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'payment.failed',
  'credit_note.created',
  'subscription.updated',
  'meter.usage.recorded',
] as const;
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
export async function appendEvent(client: PgClient, e: NewEvent): Promise<string> {
  return (await appendEvents(client, [e]))[0]!;
}

export interface NewEvent {
  accountId: string;
  type: EventType;
  /** May hold JsonDecimal money: stored digit for digit. */
  data: Record<string, unknown>;
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
