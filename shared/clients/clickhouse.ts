import { createClient, ClickHouseLogLevel, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export interface ClickhouseClientOptions {
  /** Connections per server. */
  maxOpenConnections?: number;
  /** Failures are reported by the caller (once, with context) rather than by the client's own logger. */
  quiet?: boolean;
}

function clientFor(url: string, database: string | undefined, o: ClickhouseClientOptions): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: 30_000,
    compression: { request: false, response: false },
    max_open_connections: o.maxOpenConnections ?? 16,
    ...(o.quiet ? { log: { level: ClickHouseLogLevel.OFF } } : {}),
  });
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_SOCKET']);

/** The server could not be reached (or dropped the connection): another replica may answer. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string }; message?: string } | undefined;
  if (!e) return false;
  if (CONNECTION_ERRORS.has(e.code ?? '') || CONNECTION_ERRORS.has(e.cause?.code ?? '')) return true;
  return /socket hang up|connect ECONNREFUSED|Timeout error/i.test(e.message ?? '');
}

/**
 * Several replicas that hold the same data (one shard, or the Distributed tables every node serves): a
 * request goes to the replica that last answered and moves on to the next when that one cannot be reached.
 */
export class ClickhouseReplicas {
  readonly clients: ClickHouseClient[];
  private current = 0;

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
    let lastError: unknown;
    for (let tried = 0; tried < this.clients.length; tried++) {
      const i = (this.current + tried) % this.clients.length;
      try {
        const out = await fn(this.clients[i]!);
        this.current = i;
        return out;
      } catch (err) {
        if (!isConnectionError(err)) throw err;
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
  return url.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * A client for CLICKHOUSE_URL. With several URLs (a cluster's replicas, each serving the Distributed
 * tables) every request fails over to the next replica when one is unreachable. Streams passed as insert
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
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => replicas.run((ch) => (Reflect.get(ch, prop) as (...a: unknown[]) => Promise<unknown>).apply(ch, args));
    },
  });
}
