/**
 * PostgreSQL in the local stack: the Debian package and where its binaries live, the unprivileged
 * account it runs as when we are root, initdb, start, readiness probe (SELECT 1), stop, URL.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { chmod, chown, lchown, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { StackError } from './errors.js';
import { findOnPath, isExecutableFile } from './install.js';
import {
  launch,
  loginOf,
  named,
  requireCommand,
  type InstanceOptions,
  type Login,
  type Ports,
  type ServerHandle,
  type ServerKind,
} from './launch.js';
import { PROBE_TIMEOUT_MS, probing, urlHost, type ProbeResult } from './probe.js';
import {
  LOG_TAIL_LINES,
  assertPortFree,
  describeExit,
  exitOf,
  fileSize,
  isAlive,
  spawnDetached,
  tailFile,
  type RunAs,
} from './process.js';

export interface PostgresOptions {
  dir: string;
  port: number;
  host?: string;
  timeoutMs?: number;
  /** Role → password (`postgres`, `meterline_owner`, `meterline_app`): password logins only. Unset: trust. */
  passwords?: Record<string, string>;
  /** Addresses besides loopback that may connect (the other hosts): with passwords only. */
  clients?: string[];
}

/** The app's database, owned by the role migrations run as; the app role may only read and write rows. */
const DATABASE = 'meterline';
const OWNER = 'meterline_owner';
const APP = 'meterline_app';

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Directory holding `postgres` and `initdb` (highest /usr/lib/postgresql/<v>/bin, else PATH). */
export function postgresBinDir(): string | null {
  const base = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = readdirSync(base).filter((v) => /^\d+(\.\d+)*$/.test(v));
  } catch {
    /* not a Debian-style layout */
  }
  const hasBoth = (dir: string) =>
    isExecutableFile(path.join(dir, 'postgres')) && isExecutableFile(path.join(dir, 'initdb'));
  for (const v of versions.sort(compareVersions).reverse()) {
    if (hasBoth(path.join(base, v, 'bin'))) return path.join(base, v, 'bin');
  }
  const onPath = findOnPath('postgres');
  return onPath && hasBoth(path.dirname(onPath)) ? path.dirname(onPath) : null;
}

function idOf(user: string): RunAs | null {
  const u = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (u.status !== 0 || g.status !== 0) return null;
  const uid = Number(u.stdout.trim());
  const gid = Number(g.stdout.trim());
  return Number.isInteger(uid) && Number.isInteger(gid) ? { user, uid, gid } : null;
}

/**
 * When running as root, the unprivileged account Postgres must run as:
 * `postgres` if it exists, else `meterline` (created as a system user).
 * Null when not root (Postgres then simply runs as the current user).
 */
function postgresRunAs(): RunAs | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const existing = idOf('postgres') ?? idOf('meterline');
  if (existing) return existing;
  const r = spawnSync('useradd', ['--system', '--no-create-home', 'meterline'], { encoding: 'utf8' });
  const created = idOf('meterline');
  if (created) return created;
  throw new StackError(
    `postgres refuses to run as root and no unprivileged user is available; ` +
      `\`useradd --system --no-create-home meterline\` failed: ${(r.stderr || r.error?.message || '').trim()}`,
    'postgres',
  );
}

/** chown p (and, where p's owner was wrong, everything under it) to uid:gid. */
async function chownIfNeeded(p: string, uid: number, gid: number): Promise<void> {
  let st;
  try {
    st = await lstat(p);
  } catch {
    return;
  }
  if (st.uid === uid && st.gid === gid) return;
  if (st.isSymbolicLink()) return lchown(p, uid, gid);
  await chown(p, uid, gid);
  if (st.isDirectory()) {
    for (const e of await readdir(p)) await chownIfNeeded(path.join(p, e), uid, gid);
  }
}

/** The directory, owned by (and writable for) the account Postgres runs as. */
async function prepareDir(dir: string, runAs: RunAs | null, logFile: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await mkdir(path.join(dir, 'sock'), { recursive: true, mode: 0o700 });
  await writeFile(logFile, '', { flag: 'a' });
  if (!runAs) return;
  await chownIfNeeded(dir, runAs.uid, runAs.gid);
  for (const e of await readdir(dir)) await chownIfNeeded(path.join(dir, e), runAs.uid, runAs.gid);
  const r = spawnSync('/bin/sh', ['-c', 'test -w "$1" && test -x "$1"', 'sh', dir], { uid: runAs.uid, gid: runAs.gid });
  if (r.status !== 0) {
    throw new StackError(
      `postgres runs as user ${runAs.user} (it refuses to run as root) but that user cannot write to ${dir}; ` +
        `make every parent directory traversable (chmod o+x) or use a data directory outside of it`,
      'postgres',
      logFile,
    );
  }
}

/** initdb, once: the cluster keeps its data across restarts. */
async function initCluster(dir: string, runAs: RunAs | null, env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  const dataDir = path.join(dir, 'data');
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) return;
  const before = fileSize(logFile);
  const initdb = path.join(postgresBinDir() ?? '', 'initdb');
  const args = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions'];
  const result = await exitOf(spawnDetached(initdb, args, { cwd: dir, logFile, runAs, env }));
  if (result instanceof Error || result.code !== 0) {
    throw new StackError(
      `postgres: initdb of ${dataDir} failed (${describeExit(result)}). See ${logFile}; last lines:\n${tailFile(logFile, LOG_TAIL_LINES, before) || '(log is empty)'}`,
      'postgres',
      logFile,
    );
  }
}

/**
 * Postgres refuses to start while postmaster.pid (or the socket's .lock file)
 * names a live pid, and kill(pid, 0) succeeds on a zombie: where PID 1 reaps
 * orphans lazily (containers), a postmaster that died moments ago still blocks
 * the restart. Remove such lock files when their pid is dead or a zombie
 * (postgres itself does the same for a dead pid).
 */
function removeStaleLocks(files: string[]): void {
  for (const lock of files) {
    let first: number;
    try {
      first = Number(readFileSync(lock, 'utf8').split('\n')[0]?.trim());
    } catch {
      continue;
    }
    if (Number.isInteger(first) && first > 0 && !isAlive(first)) rmSync(lock, { force: true });
  }
}

/** Client authentication, rewritten on every start: passwords (SCRAM) for everyone, or trust when open. */
function hbaConfig(method: 'scram-sha-256' | 'trust', clients: string[] = []): string {
  const cidr = (a: string) => (a.includes(':') ? `${a}/128` : /^[\d.]+$/.test(a) ? `${a}/32` : a);
  return [
    '# generated by infra/stack/postgres.ts; rewritten on every start',
    `local all all ${method}`,
    `host all all 127.0.0.1/32 ${method}`,
    `host all all ::1/128 ${method}`,
    ...clients.map((c) => `host all all ${cidr(c)} scram-sha-256`),
    '',
  ].join('\n');
}

/**
 * The superuser's password, set before the server listens (single-user mode needs no login), so that a
 * cluster initialised open (by an older launcher) is locked down too. The password goes through stdin.
 */
async function setSuperuserPassword(
  dir: string,
  password: string,
  o: { runAs: RunAs | null; env: NodeJS.ProcessEnv; logFile: string },
): Promise<void> {
  const before = fileSize(o.logFile);
  const args = ['--single', '-D', path.join(dir, 'data'), '-c', 'exit_on_error=on', 'postgres'];
  const child = spawnDetached(path.join(postgresBinDir() ?? '', 'postgres'), args, { cwd: dir, ...o, stdin: 'pipe' });
  child.stdin?.end(`ALTER ROLE postgres WITH PASSWORD '${password}';\n`);
  const result = await exitOf(child);
  if (result instanceof Error || result.code !== 0) {
    throw new StackError(
      `postgres: setting the superuser password failed (${describeExit(result)}). See ${o.logFile}; last lines:\n${tailFile(o.logFile, LOG_TAIL_LINES, before) || '(log is empty)'}`,
      'postgres',
      o.logFile,
    );
  }
}

async function runSql(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * The owner role (migrations), the app role (rows only: no DDL, no roles, no databases) and the app's
 * database; idempotent. Default privileges grant the app role every table and sequence the owner creates,
 * so each migration grants what it adds without saying so.
 */
async function provisionRoles(adminUrl: string, passwords: Record<string, string>): Promise<void> {
  const role = (name: string) => [
    `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${name}') THEN CREATE ROLE ${name}; END IF; END $$`,
    `ALTER ROLE ${name} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD '${passwords[name] ?? ''}'`,
  ];
  await runSql(adminUrl, [...role(OWNER), ...role(APP)]);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = await admin
    .query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
    .finally(() => admin.end());
  if (exists.rowCount === 0) await runSql(adminUrl, [`CREATE DATABASE ${DATABASE} OWNER ${OWNER}`]);
  const inApp = new URL(adminUrl);
  inApp.pathname = `/${DATABASE}`;
  await runSql(inApp.toString(), [
    `REVOKE ALL ON DATABASE ${DATABASE} FROM PUBLIC`,
    `GRANT CONNECT, TEMPORARY ON DATABASE ${DATABASE} TO ${APP}`,
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${OWNER} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${APP}`,
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${OWNER} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${APP}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${APP}`,
    `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${APP}`,
  ]);
}

async function startPostgresImpl(o: PostgresOptions): Promise<ServerHandle> {
  const dir = path.resolve(o.dir);
  const host = o.host ?? '127.0.0.1';
  const command = requireCommand(postgres);
  const runAs = postgresRunAs();
  const dataDir = path.join(dir, 'data');
  const sockDir = path.join(dir, 'sock');
  const logFile = postgres.logFile(dir);
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('PG')) delete env[k];

  await prepareDir(dir, runAs, logFile);
  await initCluster(dir, runAs, env, logFile);
  await chmod(dataDir, 0o700);
  removeStaleLocks([path.join(dataDir, 'postmaster.pid'), path.join(sockDir, `.s.PGSQL.${o.port}.lock`)]);
  const superuserPassword = o.passwords?.postgres;
  if (superuserPassword) await setSuperuserPassword(dir, superuserPassword, { runAs, env, logFile });
  await writeFile(
    path.join(dataDir, 'pg_hba.conf'),
    hbaConfig(superuserPassword ? 'scram-sha-256' : 'trust', o.clients),
  );
  // Unix socket paths are limited to 107 bytes; skip the socket when the directory is too deep.
  const sockArg = Buffer.byteLength(path.join(sockDir, `.s.PGSQL.${o.port}`)) < 100 ? sockDir : '';
  const args = [
    '-D',
    dataDir,
    '-p',
    String(o.port),
    '-k',
    sockArg,
    '-h',
    host,
    '-c',
    'max_connections=200',
    '-c',
    'shared_buffers=128MB',
  ];
  const handle = await launch({
    server: 'postgres',
    command,
    args,
    dir,
    stdoutLog: logFile,
    logFile,
    url: postgres.url({ port: o.port }, host, loginOf(postgres, o.passwords, 'admin')),
    probe: postgres.probe,
    stopSignal: postgres.stopSignal,
    runAs,
    env,
    ports: [{ port: o.port, role: 'port' }],
    host,
    timeoutMs: o.timeoutMs,
  });
  if (o.passwords)
    await provisionRoles(handle.url, o.passwords).catch(async (e) => {
      await handle.stop();
      throw e;
    });
  return handle;
}

export function startPostgres(o: PostgresOptions): Promise<ServerHandle> {
  return named('postgres', async () => {
    // Before a possibly slow initdb: a taken port fails at once.
    await assertPortFree(o.port, o.host ?? '127.0.0.1', 'postgres');
    return startPostgresImpl(o);
  });
}

function probePostgres(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      query_timeout: PROBE_TIMEOUT_MS,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const r = await client.query('SELECT 1 AS ok');
      return r.rows[0]?.ok === 1 ? { ok: true } : { ok: false, detail: 'SELECT 1 returned an unexpected result' };
    } finally {
      client.end().catch(() => undefined);
    }
  });
}

export const postgres: ServerKind = {
  name: 'postgres',
  debianPackage: 'postgresql',
  binaryDescription: '/usr/lib/postgresql/*/bin/postgres',
  command: () => {
    const dir = postgresBinDir();
    return dir ? { command: path.join(dir, 'postgres'), args: [] } : null;
  },
  stopSignal: 'SIGINT', // "fast" shutdown: disconnects clients, checkpoints, exits
  urlVariable: 'DATABASE_URL',
  defaultPorts: { port: 55432 },
  userOf: { admin: 'postgres', migrate: OWNER, api: APP, consumer: APP, dispatcher: APP, billing: APP },
  logFile: (dir) => path.join(dir, 'postgres.log'),
  url: (ports: Ports, host = '127.0.0.1', login?: Login) => {
    // The superuser (tests' isolated worlds create databases through it) in `postgres`, the others in the app's database.
    if (!login) return `postgres://postgres@${urlHost(host)}:${ports.port}/postgres`;
    const db = login.user === 'postgres' ? 'postgres' : DATABASE;
    return `postgres://${login.user}:${encodeURIComponent(login.password)}@${urlHost(host)}:${ports.port}/${db}`;
  },
  start: (o: InstanceOptions) =>
    startPostgres({
      dir: o.dir,
      port: o.ports.port,
      host: o.host,
      timeoutMs: o.timeoutMs,
      passwords: o.passwords,
      clients: o.clients,
    }),
  probe: probePostgres,
};
