/**
 * `meterline backup create --out DIR` and `meterline backup restore --from DIR` (docs/backups.md). The parts and
 * their order are infra/backup/; this file finds the servers (the environment's, an inventory host's or the
 * local stack's, as every operator command), and puts SECRET_KEY and the credentials file where the target's
 * servers and roles read them.
 */
import { chmodSync, copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createBackup } from '../../infra/backup/create.js';
import { readManifest } from '../../infra/backup/manifest.js';
import { restoreBackup } from '../../infra/backup/restore.js';
import { credentialsFile } from '../../infra/stack/credentials.js';
import { SECRET_FILE } from '../../infra/stack/host-env.js';
import { inventoryDir, selectedHost } from '../../infra/stack/inventory.js';
import { stackStatus } from '../../infra/stack/stack.js';
import { parseConfig } from '../../shared/config.js';
import { migrateAll } from '../migrate.js';
import { STACK_ROOT, stackSecretFile } from '../../shared/paths.js';
import { stackEnv } from './env.js';
import { EXIT, parseFlags, printResult, UsageError } from './output.js';

const say = (m: string) => process.stderr.write(`backup: ${m}\n`);

/** A key's bytes, whichever of the accepted spellings (hex or base64) it is written in. */
function keyBytes(text: string): Buffer {
  const t = text.trim();
  return /^[0-9a-f]+$/i.test(t) && t.length % 2 === 0 ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
}

function requireDir(flags: Record<string, unknown>, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} DIR is required`);
  return path.resolve(v);
}

async function create(args: string[]): Promise<number> {
  const dir = requireDir(parseFlags(args, { strings: ['out'] }), 'out');
  const env = await stackEnv({ launch: false });
  const config = parseConfig(env);
  const m = await createBackup(dir, {
    config,
    secretKey: env.SECRET_KEY!,
    credentialsFile: credentialsFile(STACK_ROOT, process.env),
    log: say,
  });
  printResult({
    backup: dir,
    backup_point: m.backup_point,
    duration_ms: m.duration_ms,
    postgres_bytes: m.postgres.bytes,
    clickhouse: m.clickhouse.tables.map((t) => ({ table: t.name, rows: t.rows, bytes: t.bytes })),
    usage_messages: m.nats.usage.messages,
    usage_records: m.nats.usage.records,
    events: m.nats.events.messages,
    kv: m.nats.kv.map((k) => ({ bucket: k.bucket, keys: k.keys })),
    credentials: m.files.credentials !== null,
  });
  return EXIT.ok;
}

/**
 * SECRET_KEY must be the backup's: it sealed the signing keys and webhook secrets the restored rows hold. Set in
 * the environment or beside an inventory, a different one is an error (the operator puts the backup's in place);
 * the local stack's file is replaced (the stack is empty; the old key is kept beside it).
 */
function installSecret(backupKey: string): string {
  if (process.env.SECRET_KEY) {
    if (!keyBytes(process.env.SECRET_KEY).equals(keyBytes(backupKey)))
      throw new Error("SECRET_KEY differs from the backup's secret.key: set it to the backup's");
    return 'the environment’s (equal to the backup’s)';
  }
  const selected = selectedHost(process.env);
  const file = selected ? path.join(inventoryDir(selected.inventory), SECRET_FILE) : stackSecretFile();
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (current !== null && keyBytes(current).equals(keyBytes(backupKey))) return file;
  if (selected && current !== null)
    throw new Error(`${file} differs from the backup's secret.key: copy the backup's there on every host`);
  if (current !== null) renameSync(file, `${file}.before-restore-${Date.now()}`);
  writeFileSync(file, `${backupKey.trim()}\n`, { mode: 0o600 });
  return file;
}

/**
 * The backup's credentials.json becomes the local stack's when the stack has none yet and is not running: its
 * servers then start with the passwords they had (a rebuilt machine). A running stack keeps its own.
 */
async function installCredentials(dir: string, file: string | null): Promise<string> {
  if (!file) return 'none in the backup';
  if (process.env.DATABASE_URL || selectedHost(process.env)) return 'not used (servers configured outside the stack)';
  const target = credentialsFile(STACK_ROOT);
  const status = await stackStatus({ root: STACK_ROOT, env: process.env });
  if (existsSync(target) || status.servers.some((s) => s.running)) return `kept the stack's own (${target})`;
  copyFileSync(path.join(dir, file), target);
  chmodSync(target, 0o600);
  return target;
}

async function restore(args: string[]): Promise<number> {
  const dir = requireDir(parseFlags(args, { strings: ['from'] }), 'from');
  const m = readManifest(dir);
  const secret = installSecret(readFileSync(path.join(dir, m.files.secret_key), 'utf8'));
  const credentials = await installCredentials(dir, m.files.credentials);
  const env = await stackEnv({ launch: true, log: say });
  const report = await restoreBackup(dir, m, parseConfig(env), say, migrateAll);
  printResult({ restored: dir, ...report, secret_key: secret, credentials });
  return EXIT.ok;
}

export async function backupCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') return create(rest);
  if (sub === 'restore') return restore(rest);
  throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand (create or restore)');
}
