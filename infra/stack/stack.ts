/**
 * The local stack used by `npm start` and `npm test`: one PostgreSQL, one
 * nats-server (JetStream) and one ClickHouse, data under `<root>/.data/`,
 * on fixed loopback ports. Idempotent: `stackUp` reuses servers that are
 * already running (recorded in `<root>/.data/stack.json`).
 *
 * Setting DATABASE_URL / NATS_URL / CLICKHOUSE_URL makes the corresponding
 * server "external": it is only probed, never installed, started or stopped.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ensureInstalled } from './install.js';
import {
  SERVER_NAMES,
  STOP_SIGNAL,
  StackError,
  isAlive,
  probeDetailed,
  processCommandLine,
  redactUrl,
  startClickhouse,
  startNats,
  startPostgres,
  stopPid,
  waitFor,
  READY_TIMEOUT_MS,
  type ServerHandle,
  type ServerName,
} from './servers.js';

export const STACK_PORTS = {
  postgres: 55432,
  nats: 54222,
  natsMonitor: 58222,
  clickhouseHttp: 58123,
  clickhouseTcp: 59000,
  clickhouseInterserver: 59009,
};

export interface StackServer {
  name: ServerName;
  url: string;
  pid: number | null;
  external: boolean;
  running: boolean;
  logFile: string | null;
}

export interface StackInfo {
  databaseUrl: string;
  natsUrl: string;
  clickhouseUrl: string;
  servers: StackServer[];
}

/** Environment variable that points at an external server. */
export const STACK_ENV: Record<ServerName, 'DATABASE_URL' | 'NATS_URL' | 'CLICKHOUSE_URL'> = {
  postgres: 'DATABASE_URL',
  nats: 'NATS_URL',
  clickhouse: 'CLICKHOUSE_URL',
};

interface ServerRecord {
  name: ServerName;
  pid: number;
  url: string;
  logFile: string;
  dir: string;
  startedAt: string;
}

interface StackState {
  version: 1;
  servers: Partial<Record<ServerName, ServerRecord>>;
}

// ---------------------------------------------------------------------------
// layout

export function stackDataDir(root: string): string {
  return path.join(path.resolve(root), '.data');
}

function serverDir(root: string, name: ServerName): string {
  return path.join(stackDataDir(root), name);
}

function stateFile(root: string): string {
  return path.join(stackDataDir(root), 'stack.json');
}

function defaultUrl(name: ServerName): string {
  switch (name) {
    case 'postgres':
      return `postgres://postgres@127.0.0.1:${STACK_PORTS.postgres}/postgres`;
    case 'nats':
      return `nats://127.0.0.1:${STACK_PORTS.nats}`;
    case 'clickhouse':
      return `http://127.0.0.1:${STACK_PORTS.clickhouseHttp}`;
  }
}

function defaultLogFile(root: string, name: ServerName): string {
  const dir = serverDir(root, name);
  switch (name) {
    case 'postgres':
      return path.join(dir, 'postgres.log');
    case 'nats':
      return path.join(dir, 'nats.log');
    case 'clickhouse':
      return path.join(dir, 'clickhouse-server.log');
  }
}

// ---------------------------------------------------------------------------
// state file

function readState(root: string): StackState {
  let raw: string;
  try {
    raw = readFileSync(stateFile(root), 'utf8');
  } catch {
    return { version: 1, servers: {} };
  }
  try {
    const parsed = JSON.parse(raw) as Partial<StackState>;
    const servers: StackState['servers'] = {};
    for (const name of SERVER_NAMES) {
      const r = parsed.servers?.[name];
      if (r && Number.isInteger(r.pid) && typeof r.url === 'string') servers[name] = r;
    }
    return { version: 1, servers };
  } catch {
    // A corrupt file (it is written atomically, so this means hand edits) is treated as empty.
    return { version: 1, servers: {} };
  }
}

function writeState(root: string, state: StackState): void {
  const file = stateFile(root);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(state, null, 2) + '\n');
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Serialise stack operations (several `npm test` / `npm start` at once) with a pid lock file. */
async function withLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(stackDataDir(root), 'stack.lock');
  const deadline = Date.now() + 3 * READY_TIMEOUT_MS;
  let holder = 0;
  await waitFor(
    async () => {
      try {
        const fd = openSync(lock, 'wx');
        try {
          writeSync(fd, String(process.pid));
        } finally {
          closeSync(fd);
        }
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      let content = '';
      let age = 0;
      try {
        content = readFileSync(lock, 'utf8').trim();
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        return false; // vanished in between: retry
      }
      holder = Number(content);
      const stale = content === '' ? age > 5_000 : !isAlive(holder);
      if (stale) rmSync(lock, { force: true });
      if (Date.now() > deadline) {
        throw new StackError(`another stack operation (pid ${holder || '?'}) has held ${lock} for too long; remove it if that process is gone`);
      }
      return false;
    },
    { timeoutMs: deadline - Date.now() + 1_000, intervalMs: 200, what: `the stack lock ${lock}` },
  );
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

// ---------------------------------------------------------------------------
// helpers

/** Is `pid` alive and (where /proc tells us) a server started in `dir`? */
function ownsPid(pid: number, dir: string): boolean {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  return cmd === null || cmd.includes(dir);
}

function readPidFile(dir: string): number | null {
  try {
    const n = Number(readFileSync(path.join(dir, 'pid'), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

function externalUrl(env: NodeJS.ProcessEnv, name: ServerName): string | null {
  const v = env[STACK_ENV[name]];
  return v && v.trim() !== '' ? v.trim() : null;
}

function toError(name: ServerName, e: unknown): StackError {
  if (e instanceof StackError) {
    if (e.server) return e;
    const wrapped = new StackError(`${name}: ${e.message}`, name, e.logFile);
    return wrapped;
  }
  return new StackError(`${name}: ${e instanceof Error ? e.message : String(e)}`, name);
}

function info(servers: StackServer[]): StackInfo {
  const url = (n: ServerName) => servers.find((s) => s.name === n)?.url ?? defaultUrl(n);
  return {
    databaseUrl: url('postgres'),
    natsUrl: url('nats'),
    clickhouseUrl: url('clickhouse'),
    servers,
  };
}

async function startLocal(root: string, name: ServerName): Promise<ServerHandle> {
  const dir = serverDir(root, name);
  switch (name) {
    case 'postgres':
      return startPostgres({ dir, port: STACK_PORTS.postgres });
    case 'nats':
      return startNats({ dir, port: STACK_PORTS.nats, monitorPort: STACK_PORTS.natsMonitor });
    case 'clickhouse':
      return startClickhouse({
        dir,
        httpPort: STACK_PORTS.clickhouseHttp,
        tcpPort: STACK_PORTS.clickhouseTcp,
        interserverPort: STACK_PORTS.clickhouseInterserver,
      });
  }
}

/** Candidate already-running instances of our server: stack.json first, then `<dir>/pid`. */
function candidates(root: string, name: ServerName, rec: ServerRecord | undefined): { pid: number; url: string; logFile: string }[] {
  const dir = serverDir(root, name);
  const out: { pid: number; url: string; logFile: string }[] = [];
  if (rec && ownsPid(rec.pid, dir)) out.push({ pid: rec.pid, url: rec.url, logFile: rec.logFile });
  const filePid = readPidFile(dir);
  if (filePid && filePid !== rec?.pid && ownsPid(filePid, dir)) {
    out.push({ pid: filePid, url: defaultUrl(name), logFile: defaultLogFile(root, name) });
  }
  return out;
}

type UpResult = { server: StackServer; record?: ServerRecord };

async function upOne(root: string, env: NodeJS.ProcessEnv, name: ServerName, rec: ServerRecord | undefined, log: (m: string) => void): Promise<UpResult> {
  const ext = externalUrl(env, name);
  if (ext) {
    const r = await probeDetailed(name, ext);
    if (!r.ok) {
      throw new StackError(
        `${name}: external server ${STACK_ENV[name]}=${redactUrl(ext)} does not answer: ${r.detail ?? 'no answer'}`,
        name,
      );
    }
    log(`${name}: using external ${redactUrl(ext)} (${STACK_ENV[name]})`);
    return { server: { name, url: ext, pid: null, external: true, running: true, logFile: null } };
  }

  const dir = serverDir(root, name);
  for (const c of candidates(root, name, rec)) {
    let r = await probeDetailed(name, c.url);
    if (!r.ok) {
      // Alive but not answering: maybe still starting (another launcher); give it the usual time.
      log(`${name}: pid ${c.pid} is running but not answering yet (${r.detail ?? ''}); waiting`);
      try {
        await waitFor(async () => !isAlive(c.pid) || (r = await probeDetailed(name, c.url)).ok, {
          timeoutMs: READY_TIMEOUT_MS,
          intervalMs: 200,
          what: `${name} pid ${c.pid} to answer`,
        });
      } catch {
        /* handled below */
      }
    }
    if (r.ok && isAlive(c.pid)) {
      log(`${name}: reusing pid ${c.pid} at ${c.url}`);
      const record: ServerRecord =
        rec && rec.pid === c.pid ? rec : { name, pid: c.pid, url: c.url, logFile: c.logFile, dir, startedAt: new Date().toISOString() };
      return { server: { name, url: c.url, pid: c.pid, external: false, running: true, logFile: c.logFile }, record };
    }
    if (isAlive(c.pid)) {
      log(`${name}: pid ${c.pid} does not answer (${r.detail ?? ''}); restarting it`);
      await stopPid(c.pid, 30_000, STOP_SIGNAL[name]);
    }
  }

  await ensureInstalled(name);
  log(`${name}: starting in ${dir}`);
  const t0 = Date.now();
  const h = await startLocal(root, name);
  log(`${name}: ready at ${h.url} (pid ${h.pid}, ${Date.now() - t0} ms)`);
  return {
    server: { name, url: h.url, pid: h.pid, external: false, running: true, logFile: h.logFile },
    record: { name, pid: h.pid, url: h.url, logFile: h.logFile, dir: h.dir, startedAt: new Date().toISOString() },
  };
}

// ---------------------------------------------------------------------------
// public API

/**
 * Bring the stack up (idempotent). Starts the three servers in parallel;
 * if any fails, the others are still recorded (so `stackDown` can stop them)
 * and a StackError describing every failure is thrown.
 */
export async function stackUp(o: { root: string; env?: NodeJS.ProcessEnv; log?: (msg: string) => void }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const env = o.env ?? process.env;
  const log = o.log ?? (() => undefined);
  await mkdir(stackDataDir(root), { recursive: true });
  return withLock(root, async () => {
    const state = readState(root);
    const results = await Promise.allSettled(SERVER_NAMES.map((n) => upOne(root, env, n, state.servers[n], log)));
    const servers: StackServer[] = [];
    const failures: StackError[] = [];
    results.forEach((r, i) => {
      const name = SERVER_NAMES[i] as ServerName;
      if (r.status === 'fulfilled') {
        servers.push(r.value.server);
        if (r.value.record) state.servers[name] = r.value.record;
      } else {
        failures.push(toError(name, r.reason));
        const rec = state.servers[name];
        if (rec && !isAlive(rec.pid)) delete state.servers[name];
      }
    });
    writeState(root, state);
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) {
      const err = new StackError(
        `${failures.length} servers failed to start:\n` + failures.map((f) => `- ${f.message}`).join('\n'),
        undefined,
        undefined,
      );
      err.failures = failures;
      throw err;
    }
    return info(servers);
  });
}

/**
 * Stop the servers recorded in stack.json (those still alive), forget them,
 * and report what was stopped. External servers are never recorded, so never stopped.
 */
export async function stackDown(o: { root: string }): Promise<{ stopped: { name: ServerName; pid: number }[] }> {
  const root = path.resolve(o.root);
  await mkdir(stackDataDir(root), { recursive: true });
  return withLock(root, async () => {
    const state = readState(root);
    const stopped: { name: ServerName; pid: number }[] = [];
    const errors: StackError[] = [];
    await Promise.all(
      SERVER_NAMES.map(async (name) => {
        const rec = state.servers[name];
        if (!rec) return;
        if (ownsPid(rec.pid, serverDir(root, name))) {
          try {
            await stopPid(rec.pid, 30_000, STOP_SIGNAL[name]);
            stopped.push({ name, pid: rec.pid });
          } catch (e) {
            errors.push(toError(name, e));
            return; // keep the record: it is still running
          }
        }
        delete state.servers[name];
      }),
    );
    writeState(root, state);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      const err = new StackError(errors.map((e) => e.message).join('\n'));
      err.failures = errors;
      throw err;
    }
    stopped.sort((a, b) => SERVER_NAMES.indexOf(a.name) - SERVER_NAMES.indexOf(b.name));
    return { stopped };
  });
}

/** Report the state of the stack without starting or stopping anything. */
export async function stackStatus(o: { root: string; env?: NodeJS.ProcessEnv }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const env = o.env ?? process.env;
  const state = readState(root);
  const servers = await Promise.all(
    SERVER_NAMES.map(async (name): Promise<StackServer> => {
      const ext = externalUrl(env, name);
      if (ext) {
        return { name, url: ext, pid: null, external: true, running: (await probeDetailed(name, ext)).ok, logFile: null };
      }
      const c = candidates(root, name, state.servers[name])[0];
      if (!c) {
        return { name, url: state.servers[name]?.url ?? defaultUrl(name), pid: null, external: false, running: false, logFile: defaultLogFile(root, name) };
      }
      const ok = (await probeDetailed(name, c.url)).ok;
      return { name, url: c.url, pid: c.pid, external: false, running: ok, logFile: c.logFile };
    }),
  );
  return info(servers);
}
