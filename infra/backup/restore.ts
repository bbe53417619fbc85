/**
 * `meterline backup restore --from DIR` (docs/backups.md) into an empty stack whose roles are not running yet,
 * of this release or a later one:
 *
 * 1. checks: this release knows every migration the backup has; the target holds no account, no usage row and
 *    no USAGE message, and no role consumes from it;
 * 2. ClickHouse migrated to the backup's version exactly, its tables loaded (clickhouse.ts);
 * 3. Postgres: the dump restored into the emptied schema;
 * 4. every later migration of this release (its data steps then run over the restored rows), NATS streams and
 *    buckets;
 * 5. NATS: USAGE resumes after the source's last sequence and gets the saved messages again (the consumers
 *    insert them when the roles start), EVENTS the saved events, the KV buckets their keys.
 *
 * The secret key and the credentials file are the caller's (services/cli/backup.ts): they must be in place
 * before the servers start and the roles read them.
 */
import path from 'node:path';
import { clickhouseMigrations, migrateClickhouse } from '../../shared/migrate.js';
import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import type { Config } from '../../shared/config.js';
import { repoPath } from '../../shared/paths.js';
import { readdir } from 'node:fs/promises';
import {
  clickhouseMigrationsApplied,
  clickhouseRows,
  dropClickhouseDatabase,
  restoreClickhouse,
} from './clickhouse.js';
import type { BackupManifest } from './manifest.js';
import { natsInUse, restoreBucket, restoreEvents, restoreUsage, resumeUsageSequence } from './nats.js';
import { accountCount, knownEvents, restorePostgres } from './postgres.js';

export interface RestoreReport {
  backup_point: string;
  duration_ms: number;
  steps: { step: string; ms: number }[];
  clickhouse: { table: string; rows: number }[];
  /** The USAGE stream's first sequence after the restore (past the source's last). */
  usage_first_seq: number;
  usage: { messages: number; records: number; skipped: number };
  events: number;
  kv: { bucket: string; keys: number }[];
}

/** Versions the backup has that this release does not: it cannot restore them. */
async function unknownMigrations(m: BackupManifest): Promise<string[]> {
  const pg = new Set(
    (await readdir(repoPath('infra/migrations/postgres'))).filter((n) => n.endsWith('.sql')).map((n) => n.slice(0, -4)),
  );
  const ch = new Set((await clickhouseMigrations()).map((x) => x.version));
  return [
    ...m.postgres.migrations.filter((v) => !pg.has(v)).map((v) => `postgres ${v}`),
    ...m.clickhouse.migrations.filter((v) => !ch.has(v)).map((v) => `clickhouse ${v}`),
  ];
}

async function checkEmpty(config: Config, names: NatsNames): Promise<void> {
  const problems: string[] = [];
  const accounts = await accountCount(config.DATABASE_URL);
  if (accounts > 0) problems.push(`Postgres holds ${accounts} accounts`);
  const rows = await clickhouseRows(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  for (const [table, n] of Object.entries(rows)) problems.push(`ClickHouse ${table} holds ${n} rows`);
  const nc = await connectNats(config.NATS_URL, 'meterline-restore-check');
  try {
    problems.push(...(await natsInUse(nc, names)));
  } finally {
    await nc.close();
  }
  if (problems.length)
    throw new Error(`a backup restores into an empty stack with no role running: ${problems.join('; ')}`);
}

export async function restoreBackup(
  dir: string,
  m: BackupManifest,
  config: Config,
  log: (m: string) => void,
  /** Every schema and data migration (services/migrate.ts's migrateAll: infra/ sits below services/). */
  migrateAll: (config: Config) => Promise<unknown>,
): Promise<RestoreReport> {
  const started = Date.now();
  const steps: RestoreReport['steps'] = [];
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const out = await fn();
    steps.push({ step: name, ms: Date.now() - t0 });
    log(`${name}: ${Date.now() - t0} ms`);
    return out;
  };
  const unknown = await unknownMigrations(m);
  if (unknown.length)
    throw new Error(
      `the backup was made by a later release (migrations ${unknown.join(', ')}): restore it with that one`,
    );
  const names = new NatsNames(config.NATS_NAMESPACE);
  await step('check the target is empty', () => checkEmpty(config, names));

  const { CLICKHOUSE_URL: chUrl, CLICKHOUSE_DATABASE: db, CLICKHOUSE_CLUSTER: cluster } = config;
  const clickhouse = await step('clickhouse', async () => {
    const wanted = new Set(m.clickhouse.migrations);
    const applied = await clickhouseMigrationsApplied(chUrl, db);
    // Migrated past the backup (its data steps ran on empty tables): made again at the backup's version.
    if (applied.some((v) => !wanted.has(v))) await dropClickhouseDatabase(chUrl, db, cluster);
    await migrateClickhouse(chUrl, db, cluster, wanted);
    return restoreClickhouse(chUrl, db, cluster, dir, m.clickhouse.tables);
  });
  await step('postgres', () => restorePostgres(config.DATABASE_URL, path.join(dir, m.postgres.file)));
  await step('migrations after the backup', () => migrateAll(config));

  const nc = await connectNats(config.NATS_URL, 'meterline-restore');
  try {
    const usageFirstSeq = await resumeUsageSequence(nc, names, m.nats.usage.last_seq);
    const usage = await step('usage stream', () => restoreUsage(nc, names, path.join(dir, m.nats.usage.file)));
    const events = await step('events stream', () =>
      restoreEvents(nc, names, path.join(dir, m.nats.events.file), (ids) => knownEvents(config.DATABASE_URL, ids)),
    );
    const kv = await step('kv buckets', async () => {
      const out: RestoreReport['kv'] = [];
      // The source's bucket names carry its namespace; the target's are the same buckets under its own.
      const targetOf = new Map(
        new NatsNames(m.source.nats_namespace).kvBuckets.map((b, i) => [b, names.kvBuckets[i]!]),
      );
      for (const b of m.nats.kv) {
        const bucket = targetOf.get(b.bucket) ?? b.bucket;
        out.push({ bucket, keys: await restoreBucket(nc, bucket, path.join(dir, b.file)) });
      }
      return out;
    });
    return {
      backup_point: m.backup_point,
      duration_ms: Date.now() - started,
      steps,
      clickhouse,
      usage_first_seq: usageFirstSeq,
      usage,
      events,
      kv,
    };
  } finally {
    await nc.close();
  }
}
