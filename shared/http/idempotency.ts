import { createHash, createHmac } from 'node:crypto';
import { deriveKey, seal, unseal } from '../secret.js';
import { Decimal as DecimalJs } from 'decimal.js';
import type pg from 'pg';
import type { Logger } from '../logging.js';
import type { RequestContext, HttpReply } from './context.js';
import type { RouteDef } from './route.js';
import { DomainError, BadRequestError, ConflictError, UnavailableError } from '../errors.js';
import { problemReply } from './problems.js';
import { JsonNumberLiteral, parseJsonExact } from '../money/json.js';

/**
 * `Idempotency-Key` on POST (docs/design.md §5): the same key with the same request within 24 h replays the first
 * response (status, body, headers such as Location); with a different request → 409 `idempotency_conflict`.
 * Keys are scoped per account and route. A duplicate arriving while the first is still running waits for it
 * (up to `waitMs`) and replays it, or gets 409 `idempotency_in_progress`: a request never runs twice.
 *
 * Saved outcomes: every response below 500 except 429 (a 422 replays as a 422, a 201 as the same 201).
 * Transient failures (5xx, 429, thrown errors) release the key so that a retry runs again.
 */
export interface IdempotencyGuard {
  run(ctx: RequestContext, route: string, execute: () => HttpReply | Promise<HttpReply>): Promise<HttpReply>;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAY_HEADER = 'Idempotent-Replayed';

/** Authenticated POSTs get idempotency unless the route opts out (usage ingestion does: records carry their own ids). */
export function isIdempotentRoute(route: Pick<RouteDef, 'method' | 'auth' | 'idempotent'>): boolean {
  return route.idempotent ?? (route.method === 'POST' && route.auth !== 'public');
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface StoredRow {
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_content_type: string | null;
  response_body: Buffer | null;
}

export interface PgIdempotencyOptions {
  /**
   * SECRET_KEY. Request bodies may hold card numbers and responses may hold once-shown secrets (a generated
   * webhook secret): the fingerprint is a keyed HMAC (no offline guessing of a card from its hash) and the
   * saved response is sealed (AES-GCM), so neither is ever at rest in clear.
   */
  secret: Buffer;
  /** How long a duplicate waits for the first request to finish. */
  waitMs?: number;
  /** A running claim older than this is presumed dead (its process crashed) and may be taken over. */
  leaseMs?: number;
  /**
   * A waiting duplicate wakes on the first request's NOTIFY (Postgres LISTEN/NOTIFY); it also looks again
   * this often in case a notification was missed (the listening connection was lost).
   */
  fallbackPollMs?: number;
  log?: Logger;
}

export class PgIdempotencyStore implements IdempotencyGuard {
  private readonly waitMs: number;
  private readonly leaseMs: number;
  private readonly fingerprintKey: Buffer;
  private readonly sealKey: Buffer;
  private readonly fallbackPollMs: number;
  private readonly notices: CompletionNotices;

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: PgIdempotencyOptions,
  ) {
    this.fingerprintKey = deriveKey(opts.secret, 'idempotency-fingerprint');
    this.sealKey = deriveKey(opts.secret, 'idempotency-responses');
    this.waitMs = opts.waitMs ?? 10_000;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.fallbackPollMs = opts.fallbackPollMs ?? 1_000;
    this.notices = new CompletionNotices(pool, opts.log);
  }

  async run(ctx: RequestContext, route: string, execute: () => HttpReply | Promise<HttpReply>): Promise<HttpReply> {
    const key = ctx.headers[IDEMPOTENCY_HEADER];
    if (key === undefined || !ctx.principal) return execute();
    if (!KEY_PATTERN.test(key)) {
      throw new BadRequestError(
        'Idempotency-Key must be 1–255 printable ASCII characters.',
        'invalid_idempotency_key',
        [{ field: 'Idempotency-Key', message: 'must be 1–255 printable ASCII characters' }],
      );
    }
    const id = { account: ctx.principal.accountId, route, key };
    const fingerprint = fingerprintOf(ctx, this.fingerprintKey);
    const deadline = Date.now() + this.waitMs;
    const channel = noticeKey(id);
    let listening = false;
    try {
      for (;;) {
        if (await this.claim(id, fingerprint)) break;
        const row = await this.lookup(id);
        if (row && row.fingerprint !== fingerprint) {
          throw new ConflictError(
            'This Idempotency-Key was already used with a different request.',
            'idempotency_conflict',
            [{ field: 'Idempotency-Key', message: 'was used with a different request body' }],
          );
        }
        if (row?.state === 'done') return replay(row, this.sealKey);
        if (Date.now() > deadline) {
          throw new ConflictError(
            'A request with this Idempotency-Key is still being processed; retry later.',
            'idempotency_in_progress',
            [{ field: 'Idempotency-Key', message: 'is in use by a request still running' }],
          );
        }
        // Still running: listen for its completion, then look again (it may have finished before we listened).
        if (!listening) {
          listening = true;
          await this.notices.subscribe();
          continue;
        }
        await this.notices.next(channel, Math.min(this.fallbackPollMs, Math.max(0, deadline - Date.now()) + 1));
      }
    } finally {
      if (listening) this.notices.unsubscribe();
    }

    let reply: HttpReply;
    try {
      reply = await execute();
    } catch (err) {
      if (err instanceof DomainError && isFinal(err.status)) await this.complete(id, problemReply(err, ctx.requestId));
      else await this.release(id);
      throw err;
    }
    if (isFinal(reply.status)) await this.complete(id, reply);
    else await this.release(id);
    return reply;
  }

  /** Inserts the key, or takes over an expired key or a dead claim of the same request; true when this request owns it. */
  private async claim(id: KeyId, fingerprint: string): Promise<boolean> {
    try {
      const r = await this.pool.query(
        `INSERT INTO idempotency_keys (account_id, route, key, fingerprint, state, locked_until)
         VALUES ($1, $2, $3, $4, 'running', now() + $5 * interval '1 millisecond')
         ON CONFLICT (account_id, route, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'running', locked_until = EXCLUDED.locked_until, created_at = now(),
               response_status = NULL, response_headers = NULL, response_content_type = NULL, response_body = NULL
           WHERE idempotency_keys.created_at < now() - interval '24 hours'
              OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until < now() AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
         RETURNING 1`,
        [id.account, id.route, id.key, fingerprint, this.leaseMs],
      );
      return r.rowCount === 1;
    } catch (err) {
      this.opts.log?.error({ err }, 'idempotency claim failed');
      throw new UnavailableError('Idempotency keys cannot be checked right now; nothing was done.');
    }
  }

  private async lookup(id: KeyId): Promise<StoredRow | null> {
    const r = await this.pool.query<StoredRow>(
      `SELECT fingerprint, state, response_status, response_headers, response_content_type, response_body
         FROM idempotency_keys
        WHERE account_id = $1 AND route = $2 AND key = $3 AND created_at >= now() - interval '24 hours'`,
      [id.account, id.route, id.key],
    );
    return r.rows[0] ?? null;
  }

  private async complete(id: KeyId, reply: HttpReply): Promise<void> {
    const plain =
      reply.raw !== undefined
        ? Buffer.from(reply.raw)
        : reply.body !== undefined
          ? Buffer.from(JSON.stringify(reply.body))
          : null;
    const body = plain === null ? null : Buffer.from(seal(this.sealKey, plain.toString('base64')));
    const contentType =
      reply.contentType ?? (reply.raw === undefined && reply.body !== undefined ? 'application/json' : null);
    try {
      await this.pool.query(
        `WITH done AS (
           UPDATE idempotency_keys
              SET state = 'done', locked_until = NULL, response_status = $4, response_headers = $5, response_content_type = $6, response_body = $7
            WHERE account_id = $1 AND route = $2 AND key = $3 RETURNING 1)
         SELECT pg_notify('${NOTICE_CHANNEL}', $8) FROM done`,
        [
          id.account,
          id.route,
          id.key,
          reply.status,
          JSON.stringify(reply.headers ?? {}),
          contentType,
          body,
          noticeKey(id),
        ],
      );
    } catch (err) {
      // The operation itself succeeded; the claim stays "running" until its lease ends.
      this.opts.log?.error({ err, route: id.route }, 'idempotency result could not be saved');
    }
  }

  private async release(id: KeyId): Promise<void> {
    await this.pool
      .query(
        `WITH gone AS (DELETE FROM idempotency_keys WHERE account_id = $1 AND route = $2 AND key = $3 AND state = 'running' RETURNING 1)
         SELECT pg_notify('${NOTICE_CHANNEL}', $4) FROM gone`,
        [id.account, id.route, id.key, noticeKey(id)],
      )
      .catch((err) => this.opts.log?.error({ err, route: id.route }, 'idempotency claim could not be released'));
  }
}

const NOTICE_CHANNEL = 'idempotency_keys';

/** The NOTIFY payload naming a key: a digest, so neither the key nor the account travels in clear. */
const noticeKey = (id: KeyId): string =>
  createHash('sha256').update(`${id.account}\u0000${id.route}\u0000${id.key}`).digest('base64url').slice(0, 22);

/**
 * One LISTEN connection per process, held only while some duplicate waits (a pool client, given back when the
 * last waiter leaves, so it never blocks shutdown). `next(key)` resolves on that key's notification or after
 * `ms`; a lost or unobtainable connection just means waiters fall back to looking every `fallbackPollMs`.
 */
class CompletionNotices {
  private client: pg.PoolClient | undefined;
  private connecting: Promise<void> | undefined;
  private users = 0;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly log?: Logger,
  ) {}

  async subscribe(): Promise<void> {
    this.users++;
    await (this.connecting ??= this.connect());
  }

  unsubscribe(): void {
    if (--this.users > 0) return;
    this.disconnect();
  }

  next(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const wake = () => {
        clearTimeout(timer);
        set!.delete(wake);
        if (set!.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
    });
  }

  private async connect(): Promise<void> {
    try {
      const client = await this.pool.connect();
      client.on('notification', (m) => {
        for (const wake of [...(this.waiters.get(m.payload ?? '') ?? [])]) wake();
      });
      client.on('error', (err) => {
        this.log?.warn({ err: err.message }, 'idempotency LISTEN connection lost; waiting duplicates poll');
        if (this.client === client) this.disconnect(err);
      });
      await client.query(`LISTEN ${NOTICE_CHANNEL}`);
      if (this.client) {
        // Another connect (after a quick unsubscribe/subscribe) won: one listener is enough.
        client.query(`UNLISTEN ${NOTICE_CHANNEL}`).then(
          () => client.release(),
          (e: Error) => client.release(e),
        );
        return;
      }
      this.client = client;
      if (this.users === 0) this.disconnect(); // everyone left while we connected
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, 'idempotency LISTEN unavailable; waiting duplicates poll');
      this.connecting = undefined;
    }
  }

  private disconnect(err?: Error): void {
    const client = this.client;
    this.client = undefined;
    this.connecting = undefined;
    if (!client) return;
    if (err) client.release(err);
    else
      client.query(`UNLISTEN ${NOTICE_CHANNEL}`).then(
        () => client.release(),
        (e: Error) => client.release(e),
      );
  }
}

/** Deletes keys past their 24 h; returns how many. */
export async function purgeExpiredIdempotencyKeys(pool: pg.Pool): Promise<number> {
  const r = await pool.query("DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'");
  return r.rowCount ?? 0;
}

interface KeyId {
  account: string;
  route: string;
  key: string;
}

const isFinal = (status: number): boolean => status < 500 && status !== 429;

function replay(row: StoredRow, sealKey: Buffer): HttpReply {
  return {
    status: row.response_status!,
    raw: row.response_body ? Buffer.from(unseal(sealKey, row.response_body.toString()), 'base64') : undefined,
    contentType: row.response_content_type ?? undefined,
    headers: { ...(row.response_headers ?? {}), [REPLAY_HEADER]: 'true' },
  };
}

/**
 * What makes two requests "the same": method, concrete path, query and the body as data (key order,
 * whitespace and number spelling ignored: {"price": 0.10} equals {"price":0.1}; numbers compared exactly).
 */
function fingerprintOf(ctx: RequestContext, key: Buffer): string {
  const h = createHmac('sha256', key);
  h.update(`${ctx.method} ${ctx.path}?${ctx.rawQuery}\n`);
  const raw = ctx.rawBody;
  if (raw && raw.length > 0) {
    let canonical: string | undefined;
    const type = (ctx.headers['content-type'] ?? '').toLowerCase();
    if (type.includes('json')) {
      try {
        canonical = canonicalJson(parseJsonExact(raw.toString('utf8')));
      } catch {
        canonical = undefined;
      }
    }
    if (canonical !== undefined) h.update('json:' + canonical);
    else h.update('raw:').update(raw);
  }
  return h.digest('hex');
}

function canonicalJson(v: unknown): string {
  if (v instanceof JsonNumberLiteral) return new DecimalJs(v.text).toString();
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
