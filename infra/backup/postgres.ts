/**
 * The Postgres part of a backup: `pg_dump --format=custom` of the app's database (one consistent snapshot),
 * restored with `pg_restore --no-owner` as the owner of the target's database, in one transaction, into its
 * emptied schema (every table, view, sequence, function and type of `public` dropped; the schema itself and its
 * default privileges stay, so the roles' grants apply to the restored tables as to migrated ones). Debian's client
 * of the server's major version (the launcher's `postgresBinDir`).
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, openSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { postgresBinDir } from '../stack/postgres.js';

/** The connection as libpq's environment: the password stays out of the process list. */
function libpqEnv(databaseUrl: string): NodeJS.ProcessEnv {
  const u = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = { ...process.env, PGCONNECT_TIMEOUT: '10' };
  for (const k of Object.keys(env)) if (k.startsWith('PG') && k !== 'PGCONNECT_TIMEOUT') delete env[k];
  return {
    ...env,
    PGHOST: u.hostname.replace(/^\[|\]$/g, ''),
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
  };
}

function run(binary: string, databaseUrl: string, args: string[]): Promise<void> {
  const bin = path.join(postgresBinDir() ?? '/usr/bin', binary);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], env: libpqEnv(databaseUrl) });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${binary} exited with ${code}: ${err.trim().slice(-2000)}`)),
    );
  });
}

/**
 * The dump, mode 0600 like every file of a backup (it holds every account's data): pg_dump creates its file
 * 0644 under the usual umask, so the file is made 0600 first (pg_dump truncates it, keeping the mode) and set
 * again after.
 */
export async function dumpPostgres(databaseUrl: string, file: string): Promise<void> {
  closeSync(openSync(file, 'w', 0o600));
  chmodSync(file, 0o600);
  await run('pg_dump', databaseUrl, ['--format=custom', '--no-owner', '--no-acl', `--file=${file}`]);
  chmodSync(file, 0o600);
}

/** Drops what the schema holds (the target was checked to have no accounts): pg_restore then recreates all of it. */
async function emptySchema(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query('BEGIN');
    const drops = await c.query<{ sql: string }>(`
      SELECT format('DROP %s IF EXISTS %s CASCADE', kind, name) AS sql FROM (
        SELECT CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE'
          ELSE 'TABLE' END AS kind, c.oid::regclass::text AS name, 1 AS ord
        FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
        UNION ALL
        SELECT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END,
          p.oid::regprocedure::text, 2
        FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
        UNION ALL
        SELECT 'TYPE', t.oid::regtype::text, 3
        FROM pg_type t WHERE t.typnamespace = 'public'::regnamespace AND t.typtype IN ('e', 'd', 'c', 'r')
          AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.typrelid AND c.relkind <> 'c')
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = t.oid AND d.deptype = 'e')
      ) x ORDER BY ord`);
    for (const d of drops.rows) await c.query(d.sql);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await c.end();
  }
}

export async function restorePostgres(databaseUrl: string, file: string): Promise<void> {
  await emptySchema(databaseUrl);
  await run('pg_restore', databaseUrl, [
    '--no-owner',
    '--no-acl',
    '--single-transaction',
    '--exit-on-error',
    `--dbname=${decodeURIComponent(new URL(databaseUrl).pathname.slice(1))}`,
    file,
  ]);
}

/** The migrations the database has applied (the backup's schema version). */
export async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const exists = await c.query(`SELECT to_regclass('public.schema_migrations') IS NOT NULL AS ok`);
    if (!exists.rows[0]?.ok) return [];
    return (await c.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(
      (r) => r.version,
    );
  } finally {
    await c.end();
  }
}

/** Of `ids`, the events the database's outbox holds. */
export async function knownEvents(databaseUrl: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query<{ id: string }>('SELECT id FROM outbox_events WHERE id = ANY($1)', [ids]);
    return new Set(r.rows.map((x) => x.id));
  } finally {
    await c.end();
  }
}

/** Accounts in the target database (0 when it has no schema yet): a restore goes into an empty one only. */
export async function accountCount(databaseUrl: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const exists = await c.query(`SELECT to_regclass('public.accounts') IS NOT NULL AS ok`);
    if (!exists.rows[0]?.ok) return 0;
    return Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0]!.n);
  } finally {
    await c.end();
  }
}
