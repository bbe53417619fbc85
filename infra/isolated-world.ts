import pg from 'pg';
import { jetstreamManager } from '@nats-io/jetstream';
import { createClickhouse } from '../shared/clients/clickhouse.js';
import { onEveryHost } from '../shared/clickhouse-hosts.js';
import { connectNats, NatsNames } from '../shared/clients/nats.js';

export interface ServerUrls {
  DATABASE_URL: string;
  NATS_URL: string;
  CLICKHOUSE_URL: string;
}

export interface IsolatedWorld {
  /** Config variables that point a process at this world; migrate it with `migrateAll(parseConfig(…))` (services/migrate.ts). */
  env: ServerUrls & { CLICKHOUSE_DATABASE: string; NATS_NAMESPACE: string };
  /** Drops the Postgres database, the ClickHouse database and the NATS streams and buckets. */
  drop(): Promise<void>;
}

/**
 * A world of its own on shared servers: a Postgres database, a ClickHouse database and a NATS namespace,
 * all named `name`. Tests and benchmark runs use one each, so they never see each other's state.
 */
export async function createIsolatedWorld(
  urls: ServerUrls,
  name: string,
  o: { clickhouseCluster?: string } = {},
): Promise<IsolatedWorld> {
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(name)) throw new Error(`world name must match [a-z][a-z0-9_]{0,30}: ${name}`);
  const admin = new pg.Client({ connectionString: urls.DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
  const dbUrl = new URL(urls.DATABASE_URL);
  dbUrl.pathname = `/${name}`;
  const names = new NatsNames(name);
  const dropPostgres = async () => {
    const a = new pg.Client({ connectionString: urls.DATABASE_URL });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => a.end());
  };
  const dropClickhouse = async () => {
    const query = `DROP DATABASE IF EXISTS ${name}`;
    // On a cluster, on each host directly (no ON CLUSTER: shared/clickhouse-hosts.ts says why).
    if (o.clickhouseCluster) return onEveryHost(urls.CLICKHOUSE_URL, query);
    const ch = createClickhouse(urls.CLICKHOUSE_URL);
    await ch.command({ query }).finally(() => ch.close());
  };
  const dropNats = async () => {
    const nc = await connectNats(urls.NATS_URL, `drop-${name}`);
    try {
      const jsm = await jetstreamManager(nc);
      const buckets = [...names.kvBuckets, names.apiProcessBucket, names.rateBucket, names.signInThrottleBucket];
      for (const stream of [names.usageStream, names.eventsStream, ...buckets.map((b) => `KV_${b}`)]) {
        await jsm.streams.delete(stream).catch(() => undefined);
      }
    } finally {
      await nc.close();
    }
  };
  return {
    env: { ...urls, DATABASE_URL: dbUrl.toString(), CLICKHOUSE_DATABASE: name, NATS_NAMESPACE: name },
    async drop() {
      // Each part is dropped even when another fails: a NATS namespace left behind keeps its usage stream's
      // max_bytes reserved against the server's max_file_store, and enough of those refuse every new stream
      // ("insufficient storage resources available", as a CI run once failed). NATS goes first: it is the one
      // whose leftovers break later tests.
      const results = await Promise.allSettled([dropNats(), dropPostgres(), dropClickhouse()]);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length > 0)
        throw new AggregateError(
          failed.map((f) => f.reason),
          `dropping world ${name}`,
        );
    },
  };
}
