import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';

/**
 * The dispatcher's side of webhook_deliveries (500_webhook_delivery.sql). One row per attempt; a `pending`
 * row is an attempt due at next_attempt_at. Claiming sets a lease (real time, longer than the request
 * timeout) under FOR UPDATE SKIP LOCKED: two dispatchers never hold the same attempt, and a dispatcher that
 * dies leaves its attempts to whoever claims after the lease ran out.
 */

export interface FirstAttempt {
  webhookId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  /** Leased to the inserting process at once (its dispatcher sends it without claiming it). */
  leased?: boolean;
}

/**
 * Attempt 1 of each (event, webhook), due at `due`; a redelivered event finds its rows and adds none. A row asked
 * `leased` is inserted with a lease of `leaseMs`, as a claim would have left it. Returns each row's new id, or null
 * where the row already existed (then its lease, if any, is not ours).
 */
export async function insertFirstAttempts(
  pg: PgPool,
  rows: FirstAttempt[],
  due: Date,
  leaseMs = 0,
): Promise<(string | null)[]> {
  if (rows.length === 0) return [];
  const ids = rows.map(() => newId('whd'));
  const r = await pg.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, next_attempt_at, lease_until)
     SELECT i, w, a, e, t, 1, 'pending', $6, CASE WHEN l THEN now() + make_interval(secs => $7::float8 / 1000) END
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $8::bool[]) AS x(i, w, a, e, t, l)
     ON CONFLICT (event_id, webhook_id, attempt) DO NOTHING
     RETURNING id`,
    [
      ids,
      rows.map((r) => r.webhookId),
      rows.map((r) => r.accountId),
      rows.map((r) => r.eventId),
      rows.map((r) => r.eventType),
      due,
      leaseMs,
      rows.map((r) => r.leased === true),
    ],
  );
  const inserted = new Set(r.rows.map((x) => x.id));
  return ids.map((id) => (inserted.has(id) ? id : null));
}

/** A claimed attempt with what sending it needs. `event` is null when the event was purged. */
export interface ClaimedAttempt {
  id: string;
  webhook_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  url: string;
  webhook_status: 'enabled' | 'disabled';
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  event: { data: Record<string, unknown>; created_at: Date } | null;
}

export interface ClaimOptions {
  /** Due when next_attempt_at ≤ this (the injectable clock). */
  now: Date;
  limit: number;
  leaseMs: number;
  /** At most this many attempts of one webhook per claim. */
  perWebhook: number;
  /** Attempts of each webhook this process is sending now: they count against perWebhook. */
  busy: Map<string, number>;
}

export async function claimDueAttempts(pg: PgPool, o: ClaimOptions): Promise<ClaimedAttempt[]> {
  // The window function runs over a bounded slice of the due rows (oldest first), so a large backlog costs
  // the same per claim; FOR UPDATE cannot sit beside a window function, hence the separate locking step.
  const r = await pg.query<Omit<ClaimedAttempt, 'event'>>(
    `WITH candidates AS (
       SELECT id FROM (
         SELECT id, webhook_id, row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, seq) AS rn
           FROM (SELECT id, webhook_id, next_attempt_at, seq FROM webhook_deliveries
                  WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= now())
                  ORDER BY next_attempt_at, seq LIMIT $2 * 4) due
       ) ranked
       LEFT JOIN unnest($5::text[], $6::int[]) AS busy(webhook_id, n) USING (webhook_id)
       WHERE rn <= $4 - COALESCE(busy.n, 0) LIMIT $2
     ), locked AS (
       SELECT id FROM webhook_deliveries
        WHERE id IN (SELECT id FROM candidates) AND status = 'pending' AND (lease_until IS NULL OR lease_until <= now())
        FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
       FROM (SELECT l.id, w.url, w.status AS webhook_status, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at
               FROM locked l
               JOIN webhook_deliveries dd ON dd.id = l.id
               JOIN webhooks w ON w.id = dd.webhook_id) x
      WHERE d.id = x.id
     RETURNING d.id, d.webhook_id, d.account_id, d.event_id, d.event_type, d.attempt, x.url, x.webhook_status, x.secret_sealed,
               x.previous_secret_sealed, x.previous_secret_expires_at`,
    [o.now, o.limit, o.leaseMs, o.perWebhook, [...o.busy.keys()], [...o.busy.values()]],
  );
  if (r.rows.length === 0) return [];
  // One event goes to many webhooks: its data is read (and parsed) once per claim, not once per attempt.
  const events = await eventsById(pg, [...new Set(r.rows.map((a) => a.event_id))]);
  return r.rows.map((row) => ({ ...row, event: events.get(row.event_id) ?? null }));
}

async function eventsById(
  pg: PgPool,
  ids: string[],
): Promise<Map<string, { data: Record<string, unknown>; created_at: Date }>> {
  const r = await pg.query<{ id: string; data: Record<string, unknown>; created_at: Date }>(
    'SELECT id, data, created_at FROM outbox_events WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Map(r.rows.map((e) => [e.id, { data: e.data, created_at: e.created_at }]));
}

/** What one attempt came to. `retryAt` null: no further attempt (success, 410, or the schedule ran out). */
export interface AttemptOutcome {
  id: string;
  webhookId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  succeeded: boolean;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  retryAt: Date | null;
  /** 410 Gone: the receiver asked to stop; the webhook is disabled. */
  disableWebhook: boolean;
}

/**
 * Records a batch of outcomes in one transaction: each attempt row gets its result, a failure with time
 * left gets its next attempt row (pending, due at retryAt; the failed row shows the same next_attempt_at),
 * and webhooks that answered 410 are disabled. Returns the accounts whose webhooks were disabled.
 */
export async function recordOutcomes(pg: PgPool, outcomes: AttemptOutcome[]): Promise<string[]> {
  if (outcomes.length === 0) return [];
  return withTransaction(pg, async (c) => {
    await c.query(
      `UPDATE webhook_deliveries d
          SET status = o.status, response_status = o.rs, error = o.err, duration_ms = o.dur, attempted_at = o.at,
              next_attempt_at = o.next, lease_until = NULL
         FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::timestamptz[], $7::timestamptz[]) AS o(id, status, rs, err, dur, at, next)
        WHERE d.id = o.id`,
      [
        outcomes.map((o) => o.id),
        outcomes.map((o) => (o.succeeded ? 'succeeded' : 'failed')),
        outcomes.map((o) => o.responseStatus),
        outcomes.map((o) => o.error),
        outcomes.map((o) => o.durationMs),
        outcomes.map((o) => o.attemptedAt),
        outcomes.map((o) => o.retryAt),
      ],
    );
    const retries = outcomes.filter((o) => o.retryAt !== null);
    if (retries.length) {
      await c.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, next_attempt_at)
         SELECT i, w, a, e, t, n, 'pending', due
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::timestamptz[]) AS x(i, w, a, e, t, n, due)
         ON CONFLICT (event_id, webhook_id, attempt) DO NOTHING`,
        [
          retries.map(() => newId('whd')),
          retries.map((o) => o.webhookId),
          retries.map((o) => o.accountId),
          retries.map((o) => o.eventId),
          retries.map((o) => o.eventType),
          retries.map((o) => o.attempt + 1),
          retries.map((o) => o.retryAt),
        ],
      );
    }
    const gone = [...new Set(outcomes.filter((o) => o.disableWebhook).map((o) => o.webhookId))];
    if (gone.length === 0) return [];
    const r = await c.query<{ account_id: string }>(
      `UPDATE webhooks SET status = 'disabled', updated_at = now() WHERE id = ANY($1::text[]) AND status = 'enabled' RETURNING account_id`,
      [gone],
    );
    return [...new Set(r.rows.map((x) => x.account_id))];
  });
}

/** Gives claimed attempts back (a stopping dispatcher that had not sent them yet). */
export async function releaseAttempts(pg: PgPool, ids: string[]): Promise<void> {
  if (ids.length)
    await pg.query('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = ANY($1::text[]) AND status = $2', [
      ids,
      'pending',
    ]);
}

/** An enabled webhook, with what fanning events out to it and sending them needs. */
export interface EnabledWebhook {
  id: string;
  account_id: string;
  events: string[];
  scope: 'account' | 'deployment';
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** The enabled webhooks of these accounts with their subscribed types, for fanning events out. */
export async function enabledWebhooksOf(pg: PgPool, accountIds: string[]): Promise<EnabledWebhook[]> {
  // The accounts' own webhooks, and the deployment webhooks (operator mode), which receive every account's events.
  const r = await pg.query<EnabledWebhook>(
    `SELECT id, account_id, events, scope, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at
       FROM webhooks
      WHERE (account_id = ANY($1::text[]) OR scope = 'deployment') AND status = 'enabled' ORDER BY seq`,
    [accountIds],
  );
  return r.rows;
}
