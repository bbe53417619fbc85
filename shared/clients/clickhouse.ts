import { Readable } from 'node:stream';
import {
  createClient,
  ClickHouseLogLevel,
  ResultSet,
  type ClickHouseClient,
  type DataFormat,
  type QueryParams,
} from '@clickhouse/client';

export type { ClickHouseClient };

export interface ClickhouseClientOptions {
  /** Connections per server. */
  maxOpenConnections?: number;
  /** Failures are reported by the caller (once, with context) rather than by the client's own logger. */
  quiet?: boolean;
  /** How long one request may take (default 30 s). */
  requestTimeoutMs?: number;
}

function clientFor(url: string, database: string | undefined, o: ClickhouseClientOptions): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: o.requestTimeoutMs ?? 30_000,
    compression: { request: false, response: false },
    max_open_connections: o.maxOpenConnections ?? 16,
    // An idle socket is dropped after 2.5 s, below the server's keep-alive (3 s by default, 10 s on the servers we
    // start) — also when a busy event loop runs the timer late: reusing a socket the server has just closed fails
    // the query with "socket hang up" (seen under load in the kill tests).
    keep_alive: { idle_socket_ttl: 2_500, eagerly_destroy_stale_sockets: true },
    ...(o.quiet ? { log: { level: ClickHouseLogLevel.OFF } } : {}),
  });
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
]);

/** The server could not be reached (or dropped the connection): another replica may answer. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string }; message?: string } | undefined;
  if (!e) return false;
  if (CONNECTION_ERRORS.has(e.code ?? '') || CONNECTION_ERRORS.has(e.cause?.code ?? '')) return true;
  return /socket hang up|connect ECONNREFUSED|Timeout error/i.test(e.message ?? '');
}

/**
 * A SELECT failed because a server it read from went away mid-query, not because of the query: on a
 * cluster, the node serving a Distributed read lost the connection to the shard replica it had picked
 * (NETWORK_ERROR 210, SOCKET_TIMEOUT 209, ATTEMPT_TO_READ_AFTER_EOF 32, ALL_CONNECTION_TRIES_FAILED 279), or
 * the answer's body was cut off. Asked again, the Distributed engine picks a live replica. 18.16's error
 * text ("Code: 210, e.displayText() = DB::NetException: …") is matched, since the client can't parse its codes.
 */
export function isInterruptedRead(err: unknown): boolean {
  if (isConnectionError(err)) return true;
  const e = err as { code?: string; message?: string } | undefined;
  if (!e) return false;
  if (e.code === 'ERR_STREAM_PREMATURE_CLOSE' || e.code === 'ECONNABORTED') return true;
  return /\bCode: (32|209|210|279)\b|DB::NetException|^aborted$/.test(e.message ?? '');
}

/** Attempts of one SELECT (select): the first and two more. */
export const READ_ATTEMPTS = 3;
const isSelect = (sql: string) => /^[\s(]*(SELECT|WITH)\b/i.test(sql);

/**
 * Several replicas that hold the same data (one shard, or the Distributed tables every node serves): a
 * request goes to the replica that last answered and moves on to the next when that one cannot be reached.
 */
/** How often a process asks replicas that did not answer for their names (ClickhouseReplicas.runPreferring). */
const NAMES_EVERY_MS = 30_000;
const NAMES_FIRST_WAIT_MS = 2_000;

export class ClickhouseReplicas {
  readonly clients: ClickHouseClient[];
  private current = 0;
  /** SELECTs asked again after a server went away under them (select). */
  retriedReads = 0;

  constructor(
    readonly urls: readonly string[],
    database: string | undefined,
    o: ClickhouseClientOptions = {},
  ) {
    if (urls.length === 0) throw new Error('no ClickHouse URL');
    this.clients = urls.map((u) => clientFor(u, database, o));
  }

  /** Runs `fn` on one replica, trying the others in turn while replicas are unreachable. */
  async run<T>(fn: (ch: ClickHouseClient) => Promise<T>): Promise<T> {
    const { out, replica } = await this.inTurn(this.current, (i) => fn(this.clients[i]!));
    this.current = replica;
    return out;
  }

  /** `fn` on replica `start`, then on the next ones in turn while they are unreachable; which one answered. */
  private async inTurn<T>(start: number, fn: (i: number) => Promise<T>): Promise<{ out: T; replica: number }> {
    let lastError: unknown;
    for (let tried = 0; tried < this.clients.length; tried++) {
      const i = (start + tried) % this.clients.length;
      try {
        return { out: await fn(i), replica: i };
      } catch (err) {
        if (!isConnectionError(err)) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  /** Each replica's name (its `replica` macro) once told; undefined: not asked yet, or asked and not answered. */
  private readonly names: (string | null | undefined)[] = [];
  private namesAskedAt = Number.NEGATIVE_INFINITY;

  /**
   * Asks the replicas not yet named for their names, at most every NAMES_EVERY_MS, in the background: a replica that
   * does not answer is never waited on by a caller (only the very first ask is, for at most NAMES_FIRST_WAIT_MS).
   */
  private askNames(): Promise<void> {
    if (
      Date.now() - this.namesAskedAt < NAMES_EVERY_MS ||
      (this.names.length === this.clients.length && !this.names.includes(undefined))
    )
      return Promise.resolve();
    this.namesAskedAt = Date.now();
    return Promise.all(
      this.clients.map(async (ch, i) => {
        if (this.names[i] !== undefined) return;
        try {
          const rs = await ch.query({
            query: `SELECT substitution AS s FROM system.macros WHERE macro = 'replica'`,
            format: 'JSONEachRow',
          });
          this.names[i] = (await rs.json<{ s: string }>())[0]?.s ?? null;
        } catch {
          // not answering now: asked again later
        }
      }),
    ).then(() => undefined);
  }

  /**
   * Runs `fn` like run(), on the replica whose `replica` macro is `name` first when it answers (then the others in
   * turn), telling `fn` the name of the replica it runs on (null when that replica can't tell it).
   */
  async runPreferring<T>(
    name: string | null,
    fn: (ch: ClickHouseClient, name: string | null) => Promise<T>,
  ): Promise<T> {
    const asking = this.askNames();
    if (this.names.length === 0)
      await Promise.race([asking, new Promise((r) => setTimeout(r, NAMES_FIRST_WAIT_MS).unref())]);
    const preferred = name === null ? -1 : this.names.indexOf(name);
    const start = preferred >= 0 ? preferred : this.current;
    return (await this.inTurn(start, (i) => fn(this.clients[i]!, this.names[i] ?? null))).out;
  }

  /**
   * A SELECT whose whole answer is read before it returns, asked again (on this replica or the next) when a
   * server went away under it (isInterruptedRead): a read is safe to repeat, and a usage read during a
   * replica's kill must answer, not fail. The answer comes back as a ResultSet over the buffered body.
   */
  async select<F extends DataFormat>(params: QueryParams & { format?: F }): Promise<ResultSet<F>> {
    const format = (params.format ?? 'JSON') as F;
    let lastError: unknown;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      if (attempt > 0) {
        this.retriedReads++;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
      try {
        return await this.run(async (ch) => {
          const rs = await ch.query({ ...params, format });
          const body = await rs.text();
          return new ResultSet(Readable.from([Buffer.from(body)]), format, rs.query_id, undefined, rs.response_headers);
        });
      } catch (err) {
        if (!isInterruptedRead(err)) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}

/** The URLs of a CLICKHOUSE_URL setting (one server, or a comma-separated list of replicas). */
export function clickhouseUrls(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * A client for CLICKHOUSE_URL. With several URLs (a cluster's replicas, each serving the Distributed
 * tables) every request fails over to the next replica when one is unreachable, and a SELECT is asked again
 * when a server went away under it (ClickhouseReplicas.select). Streams passed as insert
 * values can't be replayed: callers inserting streams use ClickhouseReplicas.run with a fresh stream.
 */
export function createClickhouse(url: string, database?: string, o: ClickhouseClientOptions = {}): ClickHouseClient {
  const urls = clickhouseUrls(url);
  if (urls.length === 1) return clientFor(urls[0]!, database, o);
  const replicas = new ClickhouseReplicas(urls, database, o);
  const first = replicas.clients[0]!;
  return new Proxy(first, {
    get(target, prop, receiver) {
      if (prop === 'close') return () => replicas.close();
      if (prop === 'query') {
        return (params: QueryParams) =>
          isSelect(params.query) ? replicas.select(params) : replicas.run((ch) => ch.query(params));
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        replicas.run((ch) => (Reflect.get(ch, prop) as (...a: unknown[]) => Promise<unknown>).apply(ch, args));
    },
  });
}
