import pg from 'pg';
import {
  jetstreamManager,
  DiscardPolicy,
  StorageType,
  RetentionPolicy,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { createClickhouse } from './clients/clickhouse.js';
import { migrateClickhouseCluster } from './migrate-cluster.js';
import { clickhouseMigrations, migrationFiles, sqlStatements } from './migration-files.js';
import type { NatsConnection, NatsNames } from './clients/nats.js';
import { repoPath } from './paths.js';

export { clickhouseMigrations } from './migration-files.js';

/** Versioned SQL files applied in order, each in its own transaction, under an advisory lock. */
export async function migratePostgres(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    // Several processes may start at once: one migrates, the others wait and then find nothing to do.
    await client.query('SELECT pg_advisory_lock(727274)');
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
    );
    for (const m of await migrationFiles(repoPath('infra/migrations/postgres'))) {
      if (done.has(m.version)) continue;
      try {
        await client.query('BEGIN');
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`postgres migration ${m.version} failed: ${(err as Error).message}`);
      }
      applied.push(m.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(727274)').catch(() => undefined);
    await client.end();
  }
  return applied;
}

/**
 * ClickHouse has no transactions: each file holds idempotent statements (IF NOT EXISTS; ADD COLUMN below) separated by
 * `;` at line end, and the version is recorded after all of them ran. With `cluster` each statement is applied host
 * by host in its replicated/sharded form (shared/migrate-cluster.ts), rewritten from the same files.
 * `only`: apply just these versions (a restore brings the schema to its backup's version, loads the rows, then
 * migrates the rest, so later migrations' data steps run over them).
 */
export async function migrateClickhouse(
  url: string,
  database: string,
  cluster = '',
  only?: ReadonlySet<string>,
): Promise<string[]> {
  if (cluster) return migrateClickhouseCluster(url, database, cluster, only);
  const admin = createClickhouse(url);
  const applied: string[] = [];
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    await admin.command({
      query: `CREATE TABLE IF NOT EXISTS ${database}.schema_migrations (version String, applied_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree() ORDER BY version`,
    });
    const rs = await admin.query({
      query: `SELECT version FROM ${database}.schema_migrations FINAL`,
      format: 'JSONEachRow',
    });
    const done = new Set((await rs.json<{ version: string }>()).map((r) => r.version));
    for (const m of await clickhouseMigrations()) {
      if (done.has(m.version) || (only && !only.has(m.version))) continue;
      for (const query of sqlStatements(m.sql, database)) {
        try {
          await admin.command({ query });
        } catch (err) {
          // ADD COLUMN has no IF NOT EXISTS on 18.16: a column already there is a statement already run.
          if (/^ALTER TABLE/i.test(query) && /column with this name already exists/.test((err as Error).message))
            continue;
          throw new Error(`clickhouse migration ${m.version} failed: ${(err as Error).message}`);
        }
      }
      await admin.insert({
        table: `${database}.schema_migrations`,
        values: [{ version: m.version }],
        format: 'JSONEachRow',
      });
      applied.push(m.version);
    }
  } finally {
    await admin.close();
  }
  return applied;
}

/** Streams and buckets; created when missing, updated to the configured limits when present. */
export async function ensureNatsTopology(
  nc: NatsConnection,
  names: NatsNames,
  usageMaxBytes: number,
  replicas = 1,
): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const changed: string[] = [];
  const streams = [
    {
      name: names.usageStream,
      num_replicas: replicas,
      subjects: [names.usageSubjects],
      storage: StorageType.File,
      // Work queue: a record leaves the stream once the consumer acked its ClickHouse insert, so max_bytes
      // caps the backlog (overload → discard new → 503), not the history.
      retention: RetentionPolicy.Workqueue,
      discard: DiscardPolicy.New,
      max_bytes: usageMaxBytes,
      max_age: 0,
      duplicate_window: 2 * 60 * 1_000_000_000,
    },
    {
      name: names.eventsStream,
      num_replicas: replicas,
      subjects: [names.eventSubjects],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: 7 * 24 * 3600 * 1_000_000_000,
      duplicate_window: 2 * 60 * 1_000_000_000,
    },
  ];
  for (const cfg of streams) {
    try {
      const info = await jsm.streams.info(cfg.name);
      const c = info.config;
      // Retention cannot be changed in place; an empty stream is re-created, a non-empty one is left alone.
      if (c.retention !== cfg.retention) {
        if (info.state.messages === 0) {
          await jsm.streams.delete(cfg.name);
          await jsm.streams.add(cfg);
          changed.push(`${cfg.name} re-created with ${cfg.retention} retention`);
        } else {
          changed.push(
            `${cfg.name} keeps ${c.retention} retention (${info.state.messages} messages); drain and delete it to switch to ${cfg.retention}`,
          );
        }
        continue;
      }
      if (c.max_bytes !== (cfg.max_bytes ?? -1) || c.discard !== cfg.discard) {
        await jsm.streams.update(cfg.name, { ...c, max_bytes: cfg.max_bytes ?? -1, discard: cfg.discard });
        changed.push(`${cfg.name} updated`);
      }
    } catch {
      await addStream(jsm, cfg);
      changed.push(`${cfg.name} created`);
    }
  }
  const kvm = new Kvm(nc);
  for (const bucket of names.kvBuckets) {
    await kvm.create(bucket, { history: 1, storage: StorageType.File, replicas });
  }
  // Heartbeats: an entry older than the TTL is a process that went away.
  await kvm.create(names.apiProcessBucket, {
    history: 1,
    storage: StorageType.Memory,
    ttl: API_PROCESS_TTL_MS,
    replicas,
  });
  // Shared rate buckets: an entry idle this long has refilled (the longest window is an hour); memory, like the
  // heartbeats: after a restart of every NATS node each account starts with a full bucket. One replica, on a
  // cluster too: a lease is a compare-and-set, and nats-server before 2.9.21 (Debian's is 2.9.10) checks a
  // replicated stream's expected sequence outside its Raft consensus (nats-server#4320), so two leases racing
  // on one account could both succeed and admit more than the limit (cluster-limits caught 3,550 records where
  // 3,500 is the bound). On one replica the check and the write are one step. While that NATS node is down, api
  // processes enforce their share of each limit alone (docs/limits.md). A bucket created before keeps its replicas.
  await kvm.create(names.rateBucket, {
    history: 1,
    storage: StorageType.Memory,
    ttl: RATE_BUCKET_TTL_MS,
    replicas: 1,
  });
  await kvm.create(names.signInThrottleBucket, {
    history: 1,
    storage: StorageType.File,
    ttl: SIGN_IN_FAILURE_TTL_MS,
    replicas,
  });
  return changed;
}

/** How long a sign-in failure counter is kept after its last failure (services/control/oauth/sign-in-throttle.ts). */
export const SIGN_IN_FAILURE_TTL_MS = 60 * 60_000;

/** How long a shared rate bucket is kept after its last change (shared/limits/rate-leases.ts): > the longest window. */
export const RATE_BUCKET_TTL_MS = 2 * 3_600_000;

/** How long an api process counts as alive after its last heartbeat (it beats every third of this). */
export const API_PROCESS_TTL_MS = 15_000;

/**
 * Creates a stream. nats-server 2.9 removes an account's stream directory when its last stream is deleted, and a
 * stream created at that moment fails with "error creating store for stream" (its log: "could not create storage
 * directory … no such file or directory"): seen when one deployment's streams are dropped as another's are made.
 * Such a failure is tried again; any other is reported with JetStream's own message (e.g. "insufficient storage
 * resources available"), which says what to fix.
 */
async function addStream(jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await jsm.streams.add(cfg);
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (attempt < 5 && /error creating store for stream/i.test(message)) {
        await new Promise((r) => setTimeout(r, 50 * attempt));
        continue;
      }
      throw new Error(`creating NATS stream ${cfg.name}: ${message}`, { cause: err });
    }
  }
}
