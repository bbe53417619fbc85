/**
 * What a backup directory holds (`manifest.json` beside the data files) — docs/backups.md:
 *
 * - `postgres.dump` — `pg_dump --format=custom` of the app's database (everything transactional);
 * - `clickhouse/<table>.native` — every table of the usage database that holds rows (clickhouse.ts), in
 *   ClickHouse's Native format, with its columns in the manifest;
 * - `nats/usage.jsonl` — the USAGE stream's messages not yet consumed into ClickHouse at the backup point (a
 *   work queue holds only those); `nats/events.jsonl` — EVENTS messages not yet fanned out to webhooks;
 *   `nats/kv-<bucket>.jsonl` — the KV buckets (token revocations, account limits, the meter registry, …);
 * - `credentials.json` (the servers' passwords, when the stack made them) and `secret.key` (SECRET_KEY, which
 *   sealed the signing keys and webhook secrets and keys the card fingerprints): 0600, like the directory.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TableDump } from './clickhouse.js';
import type { SavedStream } from './nats.js';

export const MANIFEST = 'manifest.json';
export const FORMAT = 1;

export interface BackupManifest {
  format: number;
  /**
   * `backup_point`: every usage record acknowledged (202) before it is in the backup; records acknowledged
   * after it may be. `started_at` ≤ `backup_point` ≤ `finished_at`.
   */
  started_at: string;
  backup_point: string;
  finished_at: string;
  duration_ms: number;
  release: { version: string; build: string };
  source: { clickhouse_database: string; nats_namespace: string; clickhouse_cluster: string };
  postgres: { file: string; bytes: number; migrations: string[] };
  clickhouse: { migrations: string[]; tables: TableDump[] };
  nats: {
    usage: SavedStream;
    events: { file: string; messages: number; after_seq: number };
    kv: { bucket: string; file: string; keys: number }[];
  };
  files: { credentials: string | null; secret_key: string };
}

export function readManifest(dir: string): BackupManifest {
  let m: BackupManifest;
  try {
    m = JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as BackupManifest;
  } catch (err) {
    throw new Error(`${dir} is not a meterline backup (${MANIFEST}: ${(err as Error).message})`);
  }
  if (m.format !== FORMAT) throw new Error(`${dir}: backup format ${m.format}, this release reads ${FORMAT}`);
  return m;
}

export function writeManifest(dir: string, m: BackupManifest): void {
  writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(m, null, 2)}\n`, { mode: 0o600 });
}
