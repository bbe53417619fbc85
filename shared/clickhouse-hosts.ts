/**
 * Every host of a ClickHouse cluster, each spoken to directly (the cluster migration runner, shared/migrate-cluster.ts,
 * and the backup's per-host DDL): no statement goes through ON CLUSTER, whose 18.16 DDL queue could wait
 * distributed_ddl_task_timeout for a host that never answered, without saying which (issue 50). Here a host
 * that fails is named in the error: its `replica` macro and its URL.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { clickhouseUrls, createClickhouse, type ClickhouseClientOptions } from './clients/clickhouse.js';

export interface ClickhouseHost {
  /** Its URL without the password (it appears in errors). */
  url: string;
  /** Its `replica` macro (unique in the cluster), or its URL on a host without one. */
  name: string;
  /** Its `shard` macro (1-based), 0 without one. */
  shard: number;
  client: ClickHouseClient;
}

/** An error of one host, with the host's name and URL in front of ClickHouse's own message. */
export class HostError extends Error {
  constructor(
    readonly host: Pick<ClickhouseHost, 'name' | 'url'>,
    what: string,
    cause: unknown,
  ) {
    const detail = (cause as Error)?.message ?? String(cause);
    super(`ClickHouse host ${host.name === host.url ? host.url : `${host.name} (${host.url})`}: ${what}: ${detail}`, {
      cause,
    });
  }
}

/** A URL as errors show it: the password left out. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable URL)';
  }
}

const quoted = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export async function selectRows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const rs = await client.query({ query, format: 'JSONEachRow' });
  return rs.json<T>();
}

export class ClusterHosts {
  private constructor(readonly hosts: ClickhouseHost[]) {}

  /**
   * The hosts of CLICKHOUSE_URL (one client each), identified by their macros. Every one must answer, and together
   * they must be every host `cluster`'s remote_servers lists: a schema change applied to some hosts only would
   * leave the others' tables behind.
   */
  static async open(url: string, cluster: string, o: ClickhouseClientOptions = {}): Promise<ClusterHosts> {
    const urls = clickhouseUrls(url);
    const opened = urls.map((u) => ({ url: shown(u), client: createClickhouse(u, undefined, { ...o, quiet: true }) }));
    const close = () => Promise.allSettled(opened.map((h) => h.client.close()));
    try {
      const identified = await Promise.all(
        opened.map(async (h) => {
          const macros = await selectRows<{ macro: string; substitution: string }>(
            h.client,
            `SELECT macro, substitution FROM system.macros WHERE macro IN ('shard', 'replica')`,
          ).catch((err) => {
            throw new HostError(
              { name: h.url, url: h.url },
              'did not answer (every host takes part in a migration)',
              err,
            );
          });
          const macro = (m: string) => macros.find((r) => r.macro === m)?.substitution;
          return { ...h, name: macro('replica') ?? h.url, shard: Number(macro('shard') ?? 0) };
        }),
      );
      // Two URLs of one server (a proxy in front of several) count once.
      const hosts = identified.filter((h, i) => identified.findIndex((x) => x.name === h.name) === i);
      const listed = await selectRows<{ host: string }>(
        hosts[0]!.client,
        `SELECT concat(host_name, ':', toString(port)) AS host FROM system.clusters WHERE cluster = ${quoted(cluster)}`,
      );
      if (listed.length === 0) throw new Error(`ClickHouse knows no cluster "${cluster}" (CLICKHOUSE_CLUSTER)`);
      if (hosts.length < listed.length)
        throw new Error(
          `CLICKHOUSE_URL reaches ${hosts.length} distinct hosts (${hosts.map((h) => h.name).join(', ')}) of cluster "${cluster}"'s ${listed.length} (${listed.map((l) => l.host).join(', ')}): a migration needs every host in it`,
        );
      for (const h of identified) if (!hosts.includes(h)) await h.client.close();
      return new ClusterHosts(hosts);
    } catch (err) {
      await close();
      throw err;
    }
  }

  /** `fn` on `host`, its failure named after the host. */
  async on<T>(host: ClickhouseHost, what: string, fn: (client: ClickHouseClient) => Promise<T>): Promise<T> {
    try {
      return await fn(host.client);
    } catch (err) {
      if (err instanceof HostError) throw err;
      throw new HostError(host, what, err);
    }
  }

  /** `fn` on every host at once; the first failure (named) is thrown once all have finished. */
  async every<T>(what: string, fn: (host: ClickhouseHost) => Promise<T>, hosts = this.hosts): Promise<T[]> {
    const results = await Promise.allSettled(hosts.map((h) => this.on(h, what, () => fn(h))));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.hosts.map((h) => h.client.close()));
  }
}

/** Runs one DDL statement on every host of CLICKHOUSE_URL directly (instead of ON CLUSTER), naming a host that fails. */
export async function onEveryHost(url: string, query: string): Promise<void> {
  const results = await Promise.allSettled(
    clickhouseUrls(url).map(async (u) => {
      const client = createClickhouse(u, undefined, { quiet: true });
      try {
        await client.command({ query });
      } catch (err) {
        throw new HostError({ name: shown(u), url: shown(u) }, query.slice(0, 80), err);
      } finally {
        await client.close();
      }
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
