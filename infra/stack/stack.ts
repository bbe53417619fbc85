/**
 * The local stack used by `npm start` and `npm test`: the instances of `topology.ts` (one PostgreSQL,
 * one nats-server with JetStream, one ClickHouse), data under `<root>/.data/`, on loopback.
 * Idempotent: `stackUp` reuses servers that are already running (recorded in `.data/stack.json`, and
 * still the process started in their directory); `stackDown` stops exactly the pids it recorded.
 *
 * Setting DATABASE_URL / NATS_URL / CLICKHOUSE_URL makes that server "external": it is only probed,
 * never installed, started or stopped.
 */
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SERVER_NAMES, StackError, type ServerName } from './errors.js';
import { ensureInstalled } from './install.js';
import { READY_TIMEOUT_MS, type Ports, type ServerKind } from './launch.js';
import { redactUrl } from './probe.js';
import { isAlive, ownsPid, stopPid, waitFor } from './process.js';
import { SERVERS } from './servers.js';
import { readState, stackDataDir, withLock, writeState, type ServerRecord } from './state.js';
import { singleTopology, type Instance } from './topology.js';

export { stackDataDir } from './state.js';

export interface StackServer {
  name: string;
  kind: ServerName;
  url: string;
  pid: number | null;
  external: boolean;
  running: boolean;
  logFile: string | null;
  ports: Ports | null;
}

export interface StackInfo {
  databaseUrl: string;
  natsUrl: string;
  clickhouseUrl: string;
  servers: StackServer[];
}

type Log = (m: string) => void;

function externalUrl(env: NodeJS.ProcessEnv, kind: ServerKind): string | null {
  const v = env[kind.urlVariable];
  return v && v.trim() !== '' ? v.trim() : null;
}

function toError(name: string, kind: ServerName, e: unknown): StackError {
  if (e instanceof StackError && e.server) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new StackError(`${name}: ${message}`, kind, e instanceof StackError ? e.logFile : undefined);
}

function throwAll(failures: StackError[], what: string): void {
  if (failures.length === 1) throw failures[0];
  if (failures.length === 0) return;
  const err = new StackError(`${failures.length} ${what}:\n` + failures.map((f) => `- ${f.message}`).join('\n'));
  err.failures = failures;
  throw err;
}

/** The URL each setting gets: every instance of the kind, comma-separated (one in the single topology). */
function info(servers: StackServer[]): StackInfo {
  const url = (kind: ServerName) => servers.filter((s) => s.kind === kind).map((s) => s.url).join(',');
  return { databaseUrl: url('postgres'), natsUrl: url('nats'), clickhouseUrl: url('clickhouse'), servers };
}

function external(kind: ServerKind, url: string, running: boolean): StackServer {
  return { name: kind.name, kind: kind.name, url, pid: null, external: true, running, logFile: null, ports: null };
}

function local(i: Instance, pid: number | null, running: boolean, rec?: ServerRecord): StackServer {
  const url = rec?.url ?? i.url;
  return { name: i.name, kind: i.kind.name, url, pid, external: false, running, logFile: rec?.logFile ?? i.kind.logFile(i.dir), ports: rec?.ports ?? i.ports };
}

function readPidFile(dir: string): number | null {
  try {
    const n = Number(readFileSync(path.join(dir, 'pid'), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** Already-running processes of this instance: the recorded one first, then `<dir>/pid`; only pids we own. */
function candidates(i: Instance, rec: ServerRecord | undefined): ServerRecord[] {
  const out: ServerRecord[] = [];
  if (rec && ownsPid(rec.pid, i.dir)) out.push(rec);
  const filePid = readPidFile(i.dir);
  if (filePid && filePid !== rec?.pid && ownsPid(filePid, i.dir)) out.push(newRecord(i, filePid, i.url, i.kind.logFile(i.dir)));
  return out;
}

function newRecord(i: Instance, pid: number, url: string, logFile: string): ServerRecord {
  return { name: i.name, kind: i.kind.name, pid, url, logFile, dir: i.dir, ports: i.ports, startedAt: new Date().toISOString() };
}

/** Reuse a running instance if it answers (waiting the usual time while it is still starting); stop it if it never does. */
async function reuse(i: Instance, c: ServerRecord, log: Log): Promise<boolean> {
  let r = await i.kind.probe(c.url);
  if (!r.ok) {
    log(`${i.name}: pid ${c.pid} is running but not answering yet (${r.detail ?? ''}); waiting`);
    await waitFor(async () => !isAlive(c.pid) || (r = await i.kind.probe(c.url)).ok, {
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 200,
      what: `${i.name} pid ${c.pid} to answer`,
    }).catch(() => undefined);
  }
  if (r.ok && isAlive(c.pid)) return true;
  if (isAlive(c.pid)) {
    log(`${i.name}: pid ${c.pid} does not answer (${r.detail ?? ''}); restarting it`);
    await stopPid(c.pid, 30_000, i.kind.stopSignal);
  }
  return false;
}

async function upInstance(i: Instance, rec: ServerRecord | undefined, log: Log): Promise<{ server: StackServer; record: ServerRecord }> {
  for (const c of candidates(i, rec)) {
    if (await reuse(i, c, log)) {
      log(`${i.name}: reusing pid ${c.pid} at ${redactUrl(c.url)}`);
      return { server: local(i, c.pid, true, c), record: c };
    }
  }
  await ensureInstalled(i.kind);
  log(`${i.name}: starting in ${i.dir}`);
  const t0 = Date.now();
  const h = await i.kind.start({ dir: i.dir, ports: i.ports });
  log(`${i.name}: ready at ${redactUrl(h.url)} (pid ${h.pid}, ${Date.now() - t0} ms)`);
  const record = newRecord(i, h.pid, h.url, h.logFile);
  return { server: local(i, h.pid, true, record), record };
}

async function upExternal(kind: ServerKind, url: string, log: Log): Promise<StackServer> {
  const r = await kind.probe(url);
  if (!r.ok) {
    throw new StackError(`${kind.name}: external server ${kind.urlVariable}=${redactUrl(url)} does not answer: ${r.detail ?? 'no answer'}`, kind.name);
  }
  log(`${kind.name}: using external ${redactUrl(url)} (${kind.urlVariable})`);
  return external(kind, url, true);
}

/** The servers to run: one external entry per kind given by URL, the topology's instances for the rest. */
function plan(root: string, env: NodeJS.ProcessEnv): { externals: [ServerKind, string][]; instances: Instance[] } {
  const externals = SERVER_NAMES.flatMap((n): [ServerKind, string][] => {
    const url = externalUrl(env, SERVERS[n]);
    return url ? [[SERVERS[n], url]] : [];
  });
  const instances = singleTopology(root, env).filter((i) => !externals.some(([k]) => k === i.kind));
  return { externals, instances };
}

/**
 * Bring the stack up (idempotent). Starts the servers in parallel; if any fails, the others are
 * still recorded (so `stackDown` can stop them) and a StackError describing every failure is thrown.
 */
export async function stackUp(o: { root: string; env?: NodeJS.ProcessEnv; log?: Log }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const log = o.log ?? (() => undefined);
  const { externals, instances } = plan(root, o.env ?? process.env);
  await mkdir(stackDataDir(root), { recursive: true });
  return withLock(root, async () => {
    const state = readState(root);
    const failures: StackError[] = [];
    const servers: StackServer[] = [];
    const settle = <T>(name: string, kind: ServerName, p: Promise<T>, ok: (v: T) => void) =>
      p.then(ok, (e: unknown) => {
        failures.push(toError(name, kind, e));
        if (state.servers[name] && !isAlive(state.servers[name].pid)) delete state.servers[name];
      });
    await Promise.all([
      ...externals.map(([k, url]) => settle(k.name, k.name, upExternal(k, url, log), (s) => servers.push(s))),
      ...instances.map((i) =>
        settle(i.name, i.kind.name, upInstance(i, state.servers[i.name], log), (r) => {
          servers.push(r.server);
          state.servers[i.name] = r.record;
        }),
      ),
    ]);
    writeState(root, state);
    throwAll(failures, 'servers failed to start');
    return info(sortServers(servers));
  });
}

function sortServers<T extends { name: string }>(servers: T[]): T[] {
  const order = (s: T) => SERVER_NAMES.findIndex((n) => s.name.startsWith(n));
  return servers.sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name));
}

/**
 * Stop the servers recorded in stack.json (those still alive and ours), forget them, and report what
 * was stopped. External servers are never recorded, so never stopped.
 */
export async function stackDown(o: { root: string }): Promise<{ stopped: { name: string; pid: number }[] }> {
  const root = path.resolve(o.root);
  await mkdir(stackDataDir(root), { recursive: true });
  return withLock(root, async () => {
    const state = readState(root);
    const stopped: { name: string; pid: number }[] = [];
    const errors: StackError[] = [];
    await Promise.all(
      Object.entries(state.servers).map(async ([name, rec]) => {
        const kind = SERVERS[rec.kind ?? (name as ServerName)];
        if (kind && ownsPid(rec.pid, rec.dir ?? path.join(stackDataDir(root), name))) {
          try {
            await stopPid(rec.pid, 30_000, kind.stopSignal);
            stopped.push({ name, pid: rec.pid });
          } catch (e) {
            return errors.push(toError(name, kind.name, e)); // keep the record: it is still running
          }
        }
        delete state.servers[name];
      }),
    );
    writeState(root, state);
    throwAll(errors, 'servers failed to stop');
    return { stopped: sortServers(stopped) };
  });
}

/** Report the state of the stack without starting or stopping anything. */
export async function stackStatus(o: { root: string; env?: NodeJS.ProcessEnv }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const { externals, instances } = plan(root, o.env ?? process.env);
  const state = readState(root);
  const servers = await Promise.all([
    ...externals.map(async ([k, url]) => external(k, url, (await k.probe(url)).ok)),
    ...instances.map(async (i) => {
      const c = candidates(i, state.servers[i.name])[0];
      if (!c) return local(i, null, false, state.servers[i.name]);
      return local(i, c.pid, (await i.kind.probe(c.url)).ok, c);
    }),
  ]);
  return info(sortServers(servers));
}
