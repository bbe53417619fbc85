/**
 * `meterline backup create --out DIR` (docs/backups.md): a backup taken while every role runs. The order is what
 * makes it whole without stopping anything:
 *
 * 1. the EVENTS fan-out's ack floor (events up to it have their deliveries in Postgres);
 * 2. the backup point, then the USAGE stream: every record acknowledged before the point is in a message the
 *    stream held then — saved now, or consumed meanwhile, and a message is consumed only after its rows are in
 *    ClickHouse, which is read after this;
 * 3. the Postgres snapshot; 4. the ClickHouse tables (clickhouse.ts: marks, then derived tables, then records);
 * 5. EVENTS after the floor; 6. the KV buckets; 7. secret.key and credentials.json; the manifest last, so a
 *    directory with a manifest is a complete backup.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildInfo } from '../../shared/build-info.js';
import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import type { Config } from '../../shared/config.js';
import { clickhouseMigrationsApplied, dumpClickhouse } from './clickhouse.js';
import { type BackupManifest, FORMAT, MANIFEST, writeManifest } from './manifest.js';
import { eventsAckFloor, saveBucket, saveEvents, saveUsage } from './nats.js';
import { appliedMigrations, dumpPostgres } from './postgres.js';

export type ServerConfig = Pick<
  Config,
  'DATABASE_URL' | 'NATS_URL' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'CLICKHOUSE_CLUSTER' | 'NATS_NAMESPACE'
>;

export interface BackupSource {
  config: ServerConfig;
  /** SECRET_KEY as configured (the text of secret.key). */
  secretKey: string;
  /** The servers' credentials file, when the stack keeps one. */
  credentialsFile: string | null;
  log: (m: string) => void;
}

/** A new directory, or an empty one: a backup never writes over another. */
function prepareDir(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
    if (readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: a backup goes into a new directory`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  mkdirSync(path.join(dir, 'clickhouse'), { recursive: true, mode: 0o700 });
  mkdirSync(path.join(dir, 'nats'), { recursive: true, mode: 0o700 });
}

export async function createBackup(dir: string, src: BackupSource): Promise<BackupManifest> {
  const started = Date.now();
  const { config, log } = src;
  prepareDir(dir);
  const names = new NatsNames(config.NATS_NAMESPACE);
  const nc = await connectNats(config.NATS_URL, 'meterline-backup');
  try {
    const floor = await eventsAckFloor(nc, names);
    const point = new Date();
    const usage = await saveUsage(nc, names, dir, path.join('nats', 'usage.jsonl'));
    log(`usage stream: ${usage.messages} messages (${usage.records} records) not yet in ClickHouse`);

    const pgFile = 'postgres.dump';
    await dumpPostgres(config.DATABASE_URL, path.join(dir, pgFile));
    const pgMigrations = await appliedMigrations(config.DATABASE_URL);
    log(`postgres: ${statSync(path.join(dir, pgFile)).size} bytes`);

    const chMigrations = await clickhouseMigrationsApplied(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
    const tables = await dumpClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE, dir);
    log(`clickhouse: ${tables.map((t) => `${t.name} ${t.rows}`).join(', ')}`);

    const events = await saveEvents(nc, names, dir, path.join('nats', 'events.jsonl'), floor);
    const kv: BackupManifest['nats']['kv'] = [];
    for (const bucket of names.kvBuckets) {
      const file = path.join('nats', `kv-${bucket}.jsonl`);
      kv.push({ bucket, file, keys: await saveBucket(nc, bucket, dir, file) });
    }

    writeFileSync(path.join(dir, 'secret.key'), `${src.secretKey.trim()}\n`, { mode: 0o600 });
    const credentials = src.credentialsFile && existsSync(src.credentialsFile) ? 'credentials.json' : null;
    if (credentials) {
      // Written 0600 from the start (a copy would be 0644 until chmod'ed).
      writeFileSync(path.join(dir, credentials), readFileSync(src.credentialsFile!), { mode: 0o600 });
    }

    const finished = Date.now();
    const manifest: BackupManifest = {
      format: FORMAT,
      started_at: new Date(started).toISOString(),
      backup_point: point.toISOString(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
      release: buildInfo(),
      source: {
        clickhouse_database: config.CLICKHOUSE_DATABASE,
        nats_namespace: config.NATS_NAMESPACE,
        clickhouse_cluster: config.CLICKHOUSE_CLUSTER,
      },
      postgres: { file: pgFile, bytes: statSync(path.join(dir, pgFile)).size, migrations: pgMigrations },
      clickhouse: { migrations: chMigrations, tables },
      nats: { usage, events, kv },
      files: { credentials, secret_key: 'secret.key' },
    };
    writeManifest(dir, manifest);
    log(`backup complete in ${finished - started} ms: ${path.join(dir, MANIFEST)}`);
    return manifest;
  } finally {
    await nc.close();
  }
}
