/**
 * Launching single instances of the servers meterline needs (PostgreSQL,
 * nats-server with JetStream, ClickHouse) in a directory of our choosing, on
 * loopback ports of our choosing, detached so that they outlive the launcher.
 *
 * Readiness is always established by probing the server (never a fixed sleep).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  fstatSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { chown, lchown, lstat, mkdir, readdir, writeFile, chmod } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { StackError, type ServerName } from './errors.js';
import { postgresBinDir, serverCommand } from './install.js';

export { StackError, SERVER_NAMES, type ServerName } from './errors.js';

export interface ServerHandle {
  name: ServerName;
  url: string;
  pid: number;
  dir: string;
  logFile: string;
  stop(): Promise<void>;
}

/** Overall readiness timeout for a freshly launched server. */
export const READY_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 3_000;
const LOG_TAIL_LINES = 20;

/** Signal that shuts each server down cleanly and quickly. */
export const STOP_SIGNAL: Record<ServerName, NodeJS.Signals> = {
  postgres: 'SIGINT', // "fast" shutdown: disconnects clients, checkpoints, exits
  nats: 'SIGTERM',
  clickhouse: 'SIGTERM',
};

// ---------------------------------------------------------------------------
// small helpers

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function errMessage(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) return e.errors.map(errMessage).join('; ');
  if (e instanceof Error) return e.message || (e as NodeJS.ErrnoException).code || e.name;
  return String(e);
}

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The URL with any password replaced, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Last `lines` lines of a file, optionally only of what was written after byte `from`. */
export function tailFile(file: string, lines = LOG_TAIL_LINES, from = 0): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(from, size - 64 * 1024);
    if (size <= start) return '';
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    const all = buf.toString('utf8').trimEnd().split('\n');
    return all.slice(-lines).join('\n');
  } finally {
    closeSync(fd);
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------
// processes

function procStat(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces; everything after the last ')' is space separated.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return rest; // rest[0] = state, rest[1] = ppid, rest[2] = pgrp
  } catch {
    return null;
  }
}

/**
 * Is the process alive? Zombies count as dead (PID 1 in containers does not
 * always reap orphans, and a zombie still answers kill(pid, 0)).
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const st = procStat(pid);
  if (st && (st[0] === 'Z' || st[0] === 'X')) return false;
  return true;
}

/** The process's command line (argv joined by spaces), or null where /proc is unavailable. */
export function processCommandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return null;
  }
}

/**
 * Stop a process: send `signal` (SIGTERM by default), poll until it has exited,
 * SIGKILL it (and its process group, when it leads one) after `timeoutMs`.
 */
export async function stopPid(pid: number, timeoutMs = 30_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw e;
  }
  try {
    await waitFor(async () => !isAlive(pid), { timeoutMs, intervalMs: 50, what: `pid ${pid} to exit after ${signal}` });
    return;
  } catch {
    /* fall through to SIGKILL */
  }
  const pgrp = procStat(pid)?.[2];
  try {
    if (pgrp !== undefined && Number(pgrp) === pid) process.kill(-pid, 'SIGKILL');
    else process.kill(pid, 'SIGKILL');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw e;
  }
  await waitFor(async () => !isAlive(pid), { timeoutMs: 10_000, intervalMs: 50, what: `pid ${pid} to exit after SIGKILL` });
}

/**
 * Poll `cond` every `intervalMs` (default 100) until it returns true; throws a
 * StackError after `timeoutMs`. An exception thrown by `cond` aborts the wait
 * and propagates (use that for "the process died, stop waiting").
 */
export async function waitFor(
  cond: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<void> {
  const interval = opts.intervalMs ?? 100;
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await cond()) return;
    const left = deadline - Date.now();
    if (left <= 0) throw new StackError(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}`);
    await sleep(Math.min(interval, left));
  }
}

// ---------------------------------------------------------------------------
// probes

export interface ProbeResult {
  ok: boolean;
  /** Why it is not ok (or a short description of what answered). */
  detail?: string;
}

async function probePostgres(url: string): Promise<ProbeResult> {
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
  } catch (e) {
    return { ok: false, detail: errMessage(e) };
  } finally {
    client.end().catch(() => undefined);
  }
}

function parseNatsUrls(url: string): { host: string; port: number }[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `nats://${s}`);
      return { host: stripBrackets(u.hostname) || '127.0.0.1', port: u.port ? Number(u.port) : 4222 };
    });
}

function readNatsInfo(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let buf = '';
    let done = false;
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      sock.destroy();
      resolve(r);
    };
    const sock = net.connect({ host, port });
    sock.setTimeout(PROBE_TIMEOUT_MS, () => finish({ ok: false, detail: `no INFO from ${host}:${port} within ${PROBE_TIMEOUT_MS} ms` }));
    sock.on('error', (e) => finish({ ok: false, detail: errMessage(e) }));
    sock.on('close', () => finish({ ok: false, detail: `connection to ${host}:${port} closed before INFO` }));
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\r\n');
      if (nl < 0) {
        if (buf.length > 64 * 1024) finish({ ok: false, detail: 'INFO line too long' });
        return;
      }
      const line = buf.slice(0, nl);
      if (!line.startsWith('INFO ')) return finish({ ok: false, detail: `not a NATS server (got ${JSON.stringify(line.slice(0, 80))})` });
      let info: { jetstream?: boolean; version?: string };
      try {
        info = JSON.parse(line.slice(5)) as typeof info;
      } catch {
        return finish({ ok: false, detail: 'unparsable INFO line' });
      }
      if (info.jetstream !== true) return finish({ ok: false, detail: `NATS ${info.version ?? '?'} answers but JetStream is not enabled` });
      finish({ ok: true, detail: `nats-server ${info.version ?? '?'} with JetStream` });
    });
  });
}

async function probeNats(url: string): Promise<ProbeResult> {
  let targets: { host: string; port: number }[];
  try {
    targets = parseNatsUrls(url);
  } catch (e) {
    return { ok: false, detail: `bad NATS URL: ${errMessage(e)}` };
  }
  if (targets.length === 0) return { ok: false, detail: 'empty NATS URL' };
  const details: string[] = [];
  for (const t of targets) {
    const r = await readNatsInfo(t.host, t.port);
    if (r.ok) return r;
    details.push(r.detail ?? 'unknown');
  }
  return { ok: false, detail: details.join('; ') };
}

function probeClickhouse(url: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch (e) {
      return resolve({ ok: false, detail: `bad ClickHouse URL: ${errMessage(e)}` });
    }
    u.username = '';
    u.password = '';
    u.pathname = '/ping';
    u.search = '';
    u.hash = '';
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(u, { agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () => {
        if (res.statusCode === 200 && body.trim() === 'Ok.') resolve({ ok: true });
        else resolve({ ok: false, detail: `GET /ping answered ${res.statusCode} ${JSON.stringify(body.slice(0, 80))}` });
      });
      res.on('error', (e) => resolve({ ok: false, detail: errMessage(e) }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to GET /ping within ${PROBE_TIMEOUT_MS} ms`)));
    req.on('error', (e) => resolve({ ok: false, detail: errMessage(e) }));
  });
}

/** Probe with an explanation of why it failed. */
export async function probeDetailed(name: ServerName, url: string): Promise<ProbeResult> {
  switch (name) {
    case 'postgres':
      return probePostgres(url);
    case 'nats':
      return probeNats(url);
    case 'clickhouse':
      return probeClickhouse(url);
  }
}

/** True when the server at `url` answers (Postgres: SELECT 1; NATS: INFO with JetStream; ClickHouse: /ping). */
export async function probe(name: ServerName, url: string): Promise<boolean> {
  return (await probeDetailed(name, url)).ok;
}

// ---------------------------------------------------------------------------
// ports

function portHolder(port: number): string | null {
  try {
    const r = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', timeout: 2000 });
    const m = /users:\(\("([^"]+)",pid=(\d+)/.exec(r.stdout ?? '');
    return m ? `${m[1]} (pid ${m[2]})` : null;
  } catch {
    return null;
  }
}

/** Throws a StackError naming the port and server if host:port cannot be bound. */
export async function assertPortFree(port: number, host: string, server: ServerName, role = 'port'): Promise<void> {
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const srv = net.createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
  if (!err) return;
  if (err.code === 'EADDRINUSE') {
    const holder = portHolder(port);
    throw new StackError(
      `${server}: ${role} ${port} on ${host} is already in use by another process${holder ? ` (${holder})` : ''}; ` +
        `stop it or free the port`,
      server,
    );
  }
  throw new StackError(`${server}: cannot bind ${role} ${port} on ${host}: ${errMessage(err)}`, server);
}

// ---------------------------------------------------------------------------
// running Postgres unprivileged

export interface RunAs {
  user: string;
  uid: number;
  gid: number;
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
export function postgresRunAs(): RunAs | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const existing = idOf('postgres') ?? idOf('meterline');
  if (existing) return existing;
  const r = spawnSync('useradd', ['--system', '--no-create-home', 'meterline'], { encoding: 'utf8' });
  const created = idOf('meterline');
  if (!created) {
    throw new StackError(
      `postgres refuses to run as root and no unprivileged user is available; ` +
        `\`useradd --system --no-create-home meterline\` failed: ${(r.stderr || r.error?.message || '').trim()}`,
      'postgres',
    );
  }
  return created;
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

async function ensureOwned(dir: string, runAs: RunAs | null): Promise<void> {
  if (!runAs) return;
  await chownIfNeeded(dir, runAs.uid, runAs.gid);
  for (const e of await readdir(dir)) await chownIfNeeded(path.join(dir, e), runAs.uid, runAs.gid);
}

// ---------------------------------------------------------------------------
// launching

interface Launch {
  server: ServerName;
  command: string;
  args: string[];
  dir: string;
  /** File that receives the child's stdout/stderr. */
  stdoutLog: string;
  /** The log to point people at (may differ from stdoutLog, e.g. ClickHouse). */
  logFile: string;
  /** Other logs whose tail helps diagnose a failed start. */
  extraLogs?: string[];
  url: string;
  runAs?: RunAs | null;
  env?: NodeJS.ProcessEnv;
  ports: { port: number; role: string }[];
  host: string;
  timeoutMs?: number;
}

interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function spawnDetached(
  command: string,
  args: string[],
  o: { cwd: string; logFile: string; runAs?: RunAs | null; env?: NodeJS.ProcessEnv },
): ChildProcess {
  const fd = openSync(o.logFile, 'a');
  try {
    return spawn(command, args, {
      cwd: o.cwd,
      detached: true,
      stdio: ['ignore', fd, fd],
      env: o.env ?? process.env,
      ...(o.runAs ? { uid: o.runAs.uid, gid: o.runAs.gid } : {}),
    });
  } finally {
    closeSync(fd);
  }
}

function logTails(files: string[], offsets: Map<string, number>): string {
  const parts: string[] = [];
  for (const f of files) {
    const t = tailFile(f, LOG_TAIL_LINES, offsets.get(f) ?? 0);
    if (t) parts.push(files.length > 1 ? `--- ${f}\n${t}` : t);
  }
  return parts.length ? parts.join('\n') : '(log is empty)';
}

const ADDR_IN_USE = /address already in use|EADDRINUSE/i;

async function launch(l: Launch): Promise<ServerHandle> {
  const ports = l.ports.map((p) => p.port);
  if (new Set(ports).size !== ports.length) {
    throw new StackError(`${l.server}: ports must be distinct (${l.ports.map((p) => `${p.role} ${p.port}`).join(', ')})`, l.server);
  }
  for (const p of l.ports) await assertPortFree(p.port, l.host, l.server, p.role);

  const logs = [...new Set([l.logFile, l.stdoutLog, ...(l.extraLogs ?? [])])];
  const offsets = new Map(logs.map((f) => [f, fileSize(f)] as const));
  const child = spawnDetached(l.command, l.args, { cwd: l.dir, logFile: l.stdoutLog, runAs: l.runAs, env: l.env });
  let exited: ExitInfo | null = null;
  let spawnError: Error | null = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  child.on('error', (e) => {
    spawnError = e;
  });
  child.unref();

  const failure = (what: string): StackError => {
    const tail = logTails(logs, offsets);
    const portHint = ADDR_IN_USE.test(tail)
      ? ` One of its ports (${l.ports.map((p) => `${p.role} ${p.port}`).join(', ')}) is already in use.`
      : '';
    return new StackError(`${l.server} ${what}.${portHint} See ${l.logFile}; last lines:\n${tail}`, l.server, l.logFile);
  };

  if (child.pid === undefined) {
    await new Promise((r) => setImmediate(r));
    throw new StackError(
      `${l.server}: could not start ${l.command}: ${spawnError ? errMessage(spawnError) : 'spawn failed'}`,
      l.server,
      l.logFile,
    );
  }
  const pid = child.pid;
  const pidFile = path.join(l.dir, 'pid');
  writeFileSync(pidFile, `${pid}\n`);
  if (l.runAs) await chown(pidFile, l.runAs.uid, l.runAs.gid).catch(() => undefined);

  const exitError = () => {
    const e = exited as ExitInfo | null;
    const how = e ? (e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`) : 'exited';
    return failure(`${how} before becoming ready`);
  };
  let lastDetail = '';
  const forgetPid = () => {
    try {
      if (readFileSync(pidFile, 'utf8').trim() === String(pid)) rmSync(pidFile, { force: true });
    } catch {
      /* already gone */
    }
  };
  try {
    await waitFor(
      async () => {
        if (exited || !isAlive(pid)) throw exitError();
        const r = await probeDetailed(l.server, l.url);
        lastDetail = r.detail ?? '';
        if (r.ok && (exited || !isAlive(pid))) throw exitError();
        return r.ok;
      },
      { timeoutMs: l.timeoutMs ?? READY_TIMEOUT_MS, intervalMs: 100, what: `${l.server} to answer at ${redactUrl(l.url)}` },
    );
  } catch (e) {
    forgetPid();
    if (e instanceof StackError && e.server) throw e;
    // Timed out: do not leave a half-started server behind.
    await stopPid(pid, 10_000, STOP_SIGNAL[l.server]).catch(() => undefined);
    throw failure(`did not become ready within ${(l.timeoutMs ?? READY_TIMEOUT_MS) / 1000} s (last probe: ${lastDetail || 'no answer'})`);
  }

  return {
    name: l.server,
    url: l.url,
    pid,
    dir: l.dir,
    logFile: l.logFile,
    stop: () => stopPid(pid, 30_000, STOP_SIGNAL[l.server]),
  };
}

function requireCommand(server: ServerName) {
  const c = serverCommand(server);
  if (!c) {
    throw new StackError(`${server} is not installed; call ensureInstalled('${server}') first`, server);
  }
  return c;
}

// ---------------------------------------------------------------------------
// PostgreSQL

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

async function startPostgresImpl(o: { dir: string; port: number; host?: string; timeoutMs?: number }): Promise<ServerHandle> {
  const dir = path.resolve(o.dir);
  const host = o.host ?? '127.0.0.1';
  const binDir = postgresBinDir();
  if (!binDir) throw new StackError(`postgres is not installed; call ensureInstalled('postgres') first`, 'postgres');
  const runAs = postgresRunAs();
  const dataDir = path.join(dir, 'data');
  const sockDir = path.join(dir, 'sock');
  const logFile = path.join(dir, 'postgres.log');
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('PG')) delete env[k];

  await assertPortFree(o.port, host, 'postgres'); // before a possibly slow initdb
  await mkdir(dir, { recursive: true });
  await mkdir(sockDir, { recursive: true, mode: 0o700 });
  await writeFile(logFile, '', { flag: 'a' });
  await ensureOwned(dir, runAs);

  if (runAs) {
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

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const before = fileSize(logFile);
    const initdb = spawnDetached(
      path.join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions'],
      { cwd: dir, logFile, runAs, env },
    );
    const result = await new Promise<ExitInfo | Error>((resolve) => {
      initdb.on('error', resolve);
      initdb.on('exit', (code, signal) => resolve({ code, signal }));
    });
    if (result instanceof Error || result.code !== 0) {
      const how = result instanceof Error ? errMessage(result) : result.signal ? `killed by ${result.signal}` : `exit code ${result.code}`;
      throw new StackError(
        `postgres: initdb of ${dataDir} failed (${how}). See ${logFile}; last lines:\n${tailFile(logFile, LOG_TAIL_LINES, before) || '(log is empty)'}`,
        'postgres',
        logFile,
      );
    }
  }
  await chmod(dataDir, 0o700);
  removeStaleLocks([path.join(dataDir, 'postmaster.pid'), path.join(sockDir, `.s.PGSQL.${o.port}.lock`)]);

  // Unix socket paths are limited to 107 bytes; skip the socket when the directory is too deep.
  const socketPath = path.join(sockDir, `.s.PGSQL.${o.port}`);
  const sockArg = Buffer.byteLength(socketPath) < 100 ? sockDir : '';

  const args = [
    '-D', dataDir,
    '-p', String(o.port),
    '-k', sockArg,
    '-h', host,
    '-c', 'max_connections=200',
    '-c', 'shared_buffers=128MB',
  ];
  const cmd = requireCommand('postgres');
  return launch({
    server: 'postgres',
    command: cmd.command,
    args: [...cmd.args, ...args],
    dir,
    stdoutLog: logFile,
    logFile,
    url: `postgres://postgres@${urlHost(host)}:${o.port}/postgres`,
    runAs,
    env,
    ports: [{ port: o.port, role: 'port' }],
    host,
    timeoutMs: o.timeoutMs,
  });
}

// ---------------------------------------------------------------------------
// NATS

async function startNatsImpl(o: {
  dir: string;
  port: number;
  monitorPort?: number;
  host?: string;
  maxStoreBytes?: number;
  timeoutMs?: number;
}): Promise<ServerHandle> {
  const dir = path.resolve(o.dir);
  const host = o.host ?? '127.0.0.1';
  const cmd = requireCommand('nats');
  const confFile = path.join(dir, 'nats.conf');
  const logFile = path.join(dir, 'nats.log');
  const storeDir = path.join(dir, 'js');
  await mkdir(storeDir, { recursive: true });
  const maxStore = Math.floor(o.maxStoreBytes ?? 8 * 1024 ** 3);
  const conf = [
    `# generated by infra/stack/servers.ts; rewritten on every start`,
    `server_name: ${JSON.stringify(`meterline-${o.port}`)}`,
    `listen: ${JSON.stringify(`${urlHost(host)}:${o.port}`)}`,
    ...(o.monitorPort !== undefined ? [`http: ${JSON.stringify(`${urlHost(host)}:${o.monitorPort}`)}`] : []),
    `max_payload: 8MB`,
    `jetstream {`,
    `  store_dir: ${JSON.stringify(storeDir)}`,
    `  max_file_store: ${maxStore}`,
    `  max_memory_store: ${1024 ** 3}`,
    `}`,
    ``,
  ].join('\n');
  await writeFile(confFile, conf);
  return launch({
    server: 'nats',
    command: cmd.command,
    args: [...cmd.args, '-c', confFile],
    dir,
    stdoutLog: logFile,
    logFile,
    url: `nats://${urlHost(host)}:${o.port}`,
    ports: [
      { port: o.port, role: 'client port' },
      ...(o.monitorPort !== undefined ? [{ port: o.monitorPort, role: 'monitoring port' }] : []),
    ],
    host,
    timeoutMs: o.timeoutMs,
  });
}

// ---------------------------------------------------------------------------
// ClickHouse

function xml(s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

async function startClickhouseImpl(o: {
  dir: string;
  httpPort: number;
  tcpPort: number;
  interserverPort?: number;
  host?: string;
  timeoutMs?: number;
}): Promise<ServerHandle> {
  const dir = path.resolve(o.dir);
  const host = o.host ?? '127.0.0.1';
  const cmd = requireCommand('clickhouse');
  const interserverPort = o.interserverPort ?? o.tcpPort + 9;
  const configFile = path.join(dir, 'config.xml');
  const usersFile = path.join(dir, 'users.xml');
  const logFile = path.join(dir, 'clickhouse-server.log');
  const errLogFile = path.join(dir, 'clickhouse-server.err.log');
  const stdoutLog = path.join(dir, 'clickhouse.stdout.log');
  const sub = (p: string) => path.join(dir, p) + '/';
  for (const d of ['data', 'tmp', 'user_files', 'format_schemas']) await mkdir(path.join(dir, d), { recursive: true });

  const config = `<?xml version="1.0"?>
<!-- generated by infra/stack/servers.ts; rewritten on every start -->
<yandex>
    <logger>
        <level>warning</level>
        <log>${xml(logFile)}</log>
        <errorlog>${xml(errLogFile)}</errorlog>
        <size>100M</size>
        <count>3</count>
    </logger>
    <listen_host>${xml(host)}</listen_host>
    <http_port>${o.httpPort}</http_port>
    <tcp_port>${o.tcpPort}</tcp_port>
    <interserver_http_port>${interserverPort}</interserver_http_port>
    <interserver_http_host>${xml(host)}</interserver_http_host>
    <path>${xml(sub('data'))}</path>
    <tmp_path>${xml(sub('tmp'))}</tmp_path>
    <user_files_path>${xml(sub('user_files'))}</user_files_path>
    <format_schema_path>${xml(sub('format_schemas'))}</format_schema_path>
    <users_config>${xml(usersFile)}</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>536870912</mark_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
</yandex>
`;
  const users = `<?xml version="1.0"?>
<!-- generated by infra/stack/servers.ts; rewritten on every start -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>10000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::1</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
`;
  await writeFile(configFile, config);
  await writeFile(usersFile, users);
  return launch({
    server: 'clickhouse',
    command: cmd.command,
    args: [...cmd.args, `--config-file=${configFile}`],
    dir,
    stdoutLog,
    logFile,
    extraLogs: [errLogFile],
    url: `http://${urlHost(host)}:${o.httpPort}`,
    ports: [
      { port: o.httpPort, role: 'HTTP port' },
      { port: o.tcpPort, role: 'TCP port' },
      { port: interserverPort, role: 'interserver port' },
    ],
    host,
    timeoutMs: o.timeoutMs,
  });
}

// ---------------------------------------------------------------------------
// public start functions: every failure is a StackError naming the server

async function named<T>(server: ServerName, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StackError && e.server) throw e;
    throw new StackError(`${server}: ${errMessage(e)}`, server, e instanceof StackError ? e.logFile : undefined);
  }
}

export async function startPostgres(o: { dir: string; port: number; host?: string; timeoutMs?: number }): Promise<ServerHandle> {
  return named('postgres', () => startPostgresImpl(o));
}

export async function startNats(o: {
  dir: string;
  port: number;
  monitorPort?: number;
  host?: string;
  maxStoreBytes?: number;
  timeoutMs?: number;
}): Promise<ServerHandle> {
  return named('nats', () => startNatsImpl(o));
}

export async function startClickhouse(o: {
  dir: string;
  httpPort: number;
  tcpPort: number;
  interserverPort?: number;
  host?: string;
  timeoutMs?: number;
}): Promise<ServerHandle> {
  return named('clickhouse', () => startClickhouseImpl(o));
}
