import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { Config } from '../../shared/config.js';
import type { Infra } from '../../shared/infra.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { RoleService } from '../../services/roles/role.js';
import { appendEvent, type NewEvent } from '../../services/domain/events/outbox-store.js';
import type { EventType } from '../../shared/vocabulary.js';
import {
  createDispatcherParts,
  type DispatcherOptions,
  type DispatcherParts,
} from '../../services/roles/dispatcher/components.js';
import { testInfra, waitUntil, type TestLike } from '../fixtures/env.js';
import type { ReceivedRequest } from '../fixtures/webhook-receiver.js';

/**
 * Shared by the webhook delivery tests: a dispatcher (relay, fan-out, delivery) in-process, a clock the test
 * moves forward instead of waiting for retries, and the checks a customer's receiver would make.
 */
export interface TestClock {
  now: () => Date;
  advance(ms: number): void;
}

export function testClock(): TestClock {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms) => void (offset += ms) };
}

export async function startDispatcher(
  t: TestLike,
  config: Config,
  opts: DispatcherOptions = {},
): Promise<DispatcherParts & { infra: Infra }> {
  const infra = await testInfra(t, config, 'dispatcher');
  const parts = createDispatcherParts(infra, {
    ...opts,
    delivery: { pollIntervalMs: 50, ...opts.delivery },
    relay: { pollIntervalMs: 200, ...opts.relay },
  });
  const role = new RoleService('dispatcher', infra, parts.components);
  await role.start();
  t.teardown(() => role.stop());
  return { ...parts, infra };
}

/** An event as the control plane (billing, subscriptions) appends it: in a transaction, through the outbox. */
export function emit(infra: Infra, accountId: string, type: EventType, data: Record<string, unknown>): Promise<string> {
  return withTransaction(infra.pg, (c) => appendEvent(c, { accountId, type, data } as NewEvent));
}

export interface CheckedRequest {
  payload: { id: string; type: string; data: Record<string, unknown>; created_at: string };
  /** Problems found; empty when every header and both signatures are right. */
  problems: string[];
}

/** `whsec_` + padded standard base64: the secrets the server generates, read by Standard Webhooks libraries as given. */
export function isStandardSecret(secret: string): boolean {
  const encoded = secret.startsWith('whsec_') ? secret.slice(6) : '';
  return encoded.length > 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0;
}

/**
 * What a receiver checks: the seed's headers (hex HMAC-SHA256 of the raw body) and the Standard Webhooks
 * headers, verified by the `standardwebhooks` package as docs/design.md §9 says: a `whsec_<base64>` secret as
 * given; a caller's own secret of another form, base64-encoded (its UTF-8 bytes are the key).
 */
export function checkRequest(r: ReceivedRequest, secret: string): CheckedRequest {
  const problems: string[] = [];
  const h = r.headers;
  const payload = JSON.parse(r.body.toString('utf8'));
  if (h['content-type'] !== 'application/json') problems.push(`content-type ${h['content-type']}`);
  if (h['x-webhook-id'] !== payload.id) problems.push('x-webhook-id is not the event id');
  if (h['x-webhook-event'] !== payload.type) problems.push('x-webhook-event is not the event type');
  if (!/^\d{10}$/.test(String(h['x-webhook-timestamp']))) problems.push('x-webhook-timestamp is not unix seconds');
  const hex = createHmac('sha256', secret).update(r.body).digest('hex');
  if (h['x-webhook-signature'] !== hex) problems.push('x-webhook-signature does not match the body');
  if (h['webhook-id'] !== payload.id || h['webhook-timestamp'] !== h['x-webhook-timestamp'])
    problems.push('standard webhook id/timestamp headers differ');
  try {
    new StandardWebhook(isStandardSecret(secret) ? secret : Buffer.from(secret, 'utf8').toString('base64')).verify(
      r.body.toString('utf8'),
      h as Record<string, string>,
    );
  } catch (err) {
    problems.push(`standardwebhooks: ${(err as Error).message}`);
  }
  return { payload, problems };
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  attempt: number;
  status: string;
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  attempted_at: Date | null;
  next_attempt_at: Date | null;
}

export async function attemptsOf(infra: Infra, webhookId: string, eventId?: string): Promise<DeliveryRow[]> {
  const r = await infra.pg.query<DeliveryRow>(
    `SELECT id, webhook_id, event_id, attempt, status, response_status, error, duration_ms, attempted_at, next_attempt_at
       FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::text IS NULL OR event_id = $2) ORDER BY event_id, attempt`,
    [webhookId, eventId ?? null],
  );
  return r.rows;
}

/** Waits until attempt `attempt` of (webhook, event) has an outcome, and returns it. */
export async function settledAttempt(
  infra: Infra,
  webhookId: string,
  eventId: string,
  attempt: number,
  timeoutMs = 60_000,
): Promise<DeliveryRow> {
  let row: DeliveryRow | undefined;
  await waitUntil(
    async () => {
      row = (await attemptsOf(infra, webhookId, eventId)).find((r) => r.attempt === attempt && r.status !== 'pending');
      return row !== undefined;
    },
    `attempt ${attempt} of ${eventId} to ${webhookId} to be recorded`,
    timeoutMs,
  );
  return row!;
}
