import pg from 'pg';
import { currentAuditSetting } from '../audit/actor.js';

// NUMERIC stays a string end to end (decimal-exact money); int8 counts fit in a JS number here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** No statement runs longer: a stuck query must not hold a pool connection (and a request) forever. */
export const STATEMENT_TIMEOUT_MS = 30_000;

/** The audit actor a pooled connection's session holds now ('' or absent: none). */
const SESSION_ACTOR = Symbol('audit actor');
type TaggedClient = pg.PoolClient & { [SESSION_ACTOR]?: string };
const UNKNOWN = '\u0000unknown';

/**
 * A pool whose connections carry the audit actor of the work that checked them out (shared/audit/actor.ts):
 * before the caller's first statement the session's `meterline.audit_actor` is set when it differs from what the
 * connection holds — a write request's connections get its actor, the next checkout outside one clears it — so
 * the audit trigger of every statement, in any transaction the caller opens, sees who acted. Checkouts of the
 * same actor (and all work without one, on a connection that had none) cost nothing extra.
 */
class AuditedPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: any) => void) => void,
  ): void;
  override connect(callback?: (err: Error | undefined, client: any, done: (release?: any) => void) => void): any {
    // Read here, in the caller's async context (a checkout may complete in whoever released the connection's).
    const actor = currentAuditSetting();
    if (callback)
      return super.connect((err, client, done) => {
        if (err || !client) return callback(err, client, done);
        tagSession(client, actor).then(
          () => callback(undefined, client, done),
          (e: Error) => {
            done(e);
            callback(e, undefined, () => undefined);
          },
        );
      });
    return super.connect().then(async (client) => {
      try {
        await tagSession(client, actor);
      } catch (e) {
        client.release(e as Error);
        throw e;
      }
      return client;
    });
  }
}

async function tagSession(client: TaggedClient, actor: string): Promise<void> {
  if ((client[SESSION_ACTOR] ?? '') === actor) return;
  // Unknown while the statement runs: a failure leaves it unknown, so the next checkout sets it again.
  client[SESSION_ACTOR] = UNKNOWN;
  await client.query("SELECT set_config('meterline.audit_actor', $1, false)", [actor]);
  client[SESSION_ACTOR] = actor;
}

export function createPgPool(url: string, max = 10): pg.Pool {
  const pool = new AuditedPool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '57014',
  '53300',
]);

/**
 * Whether `err` means Postgres is unreachable or refused to work right now (connection refused or lost,
 * shutting down, too many connections, statement timeout) rather than that the request was wrong: the
 * caller should retry later (503), not see a 500.
 */
export function isPostgresUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const m = typeof e.message === 'string' ? e.message : '';
  return m.includes('Connection terminated') || m.includes('timeout exceeded when trying to connect');
}

/** Runs `fn` in a transaction; rolls back on any error. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export interface PageQuery {
  /** `SELECT` list. */
  columns: string;
  from: string;
  /** Uses $1…$n, bound to `params`. */
  where: string;
  params: unknown[];
  /** Must end in a unique column so pages are stable. */
  orderBy: string;
}

/**
 * One page of rows and the number of rows the WHERE matches in all, as every list endpoint returns them.
 * The two queries run side by side on separate pool connections.
 */
export async function selectPage<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  q: PageQuery,
  page: { limit: number; offset: number },
): Promise<{ rows: R[]; total: number }> {
  const n = q.params.length;
  const [rows, count] = await Promise.all([
    pool.query<R>(
      `SELECT ${q.columns} FROM ${q.from} WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...q.params, page.limit, page.offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${q.from} WHERE ${q.where}`, q.params),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}
