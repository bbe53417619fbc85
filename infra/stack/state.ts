/**
 * What the stack remembers between commands: `<root>/.data/stack.json` (the pid, URL and ports of every
 * server instance it started, written atomically) and the lock that serialises stack operations.
 */
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { StackError, type ServerName } from './errors.js';
import { READY_TIMEOUT_MS, type Ports } from './launch.js';
import { isAlive, waitFor } from './process.js';

export interface ServerRecord {
  /** The instance: the server's name in the single topology. */
  name: string;
  pid: number;
  url: string;
  logFile: string;
  dir: string;
  startedAt: string;
  kind?: ServerName;
  ports?: Ports;
  /** Started with passwords (`.data/credentials.json`); absent for servers an older launcher started open. */
  secured?: boolean;
}

export interface StackState {
  version: 1;
  /** By instance name. */
  servers: Record<string, ServerRecord>;
}

/**
 * METERLINE_TOPOLOGY: `single` (default) or `cluster` (several nodes of each server, several processes per role);
 * `hosts` — this host's part of an inventory (inventory.ts) — whenever METERLINE_INVENTORY is set.
 */
export const TOPOLOGY_VARIABLE = 'METERLINE_TOPOLOGY';
export const TOPOLOGIES = ['single', 'cluster', 'hosts'] as const;
export type TopologyName = (typeof TOPOLOGIES)[number];

export function topologyName(env: NodeJS.ProcessEnv = process.env): TopologyName {
  if (env.METERLINE_INVENTORY?.trim()) return 'hosts';
  const raw = env[TOPOLOGY_VARIABLE]?.trim() || 'single';
  if (raw === 'hosts') throw new StackError(`${TOPOLOGY_VARIABLE}=hosts needs METERLINE_INVENTORY and METERLINE_HOST`);
  if (!(TOPOLOGIES as readonly string[]).includes(raw))
    throw new StackError(`${TOPOLOGY_VARIABLE} must be one of ${TOPOLOGIES.join(', ')}, got "${raw}"`);
  return raw as TopologyName;
}

/**
 * `<root>/.data` for the single topology, `<root>/.data/cluster` for the cluster, `<root>/.data/hosts/<host>` for
 * one host of an inventory: two stacks never share a file.
 */
export function stackDataDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = path.join(path.resolve(root), '.data');
  const topology = topologyName(env);
  if (topology === 'hosts') {
    const host = env.METERLINE_HOST?.trim() ?? '';
    if (!/^[a-z0-9][a-z0-9-]{0,40}$/.test(host))
      throw new StackError(`METERLINE_HOST must name a host of the inventory, got "${host}"`);
    return path.join(base, 'hosts', host);
  }
  return topology === 'cluster' ? path.join(base, 'cluster') : base;
}

function stateFile(root: string, env?: NodeJS.ProcessEnv): string {
  return path.join(stackDataDir(root, env), 'stack.json');
}

export function readState(root: string, env?: NodeJS.ProcessEnv): StackState {
  let parsed: Partial<StackState>;
  try {
    parsed = JSON.parse(readFileSync(stateFile(root, env), 'utf8')) as Partial<StackState>;
  } catch {
    // Missing, or corrupt (it is written atomically, so that means hand edits): treated as empty.
    return { version: 1, servers: {} };
  }
  const servers: StackState['servers'] = {};
  for (const [name, r] of Object.entries(parsed.servers ?? {})) {
    if (r && Number.isInteger(r.pid) && typeof r.url === 'string') servers[name] = r;
  }
  return { version: 1, servers };
}

export function writeState(root: string, state: StackState, env?: NodeJS.ProcessEnv): void {
  const file = stateFile(root, env);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(state, null, 2) + '\n');
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** Takes the lock file if free (or stale: its holder is gone); false while someone else holds it. */
function tryLock(lock: string, deadline: number, what = 'another stack operation'): boolean {
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
  let content: string;
  let age: number;
  try {
    content = readFileSync(lock, 'utf8').trim();
    age = Date.now() - statSync(lock).mtimeMs;
  } catch {
    return false; // vanished in between: retry
  }
  const holder = Number(content);
  if (content === '' ? age > 5_000 : !isAlive(holder)) rmSync(lock, { force: true });
  if (Date.now() > deadline) {
    throw new StackError(
      `${what} (pid ${holder || '?'}) has held ${lock} for too long; remove it if that process is gone`,
    );
  }
  return false;
}

/**
 * Runs `fn` holding the pid lock file `lock` (one holder at a time across processes; a lock whose holder is
 * gone is taken over), waiting up to `timeoutMs` for it.
 */
export async function withPidLock<T>(lock: string, timeoutMs: number, fn: () => Promise<T>, what?: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  await waitFor(async () => tryLock(lock, deadline, what), {
    timeoutMs: timeoutMs + 1_000,
    intervalMs: 200,
    what: `the lock ${lock}`,
  });
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Serialise stack operations (several `npm test` / `npm start` at once) with a pid lock file. */
export function withLock<T>(root: string, fn: () => Promise<T>, env?: NodeJS.ProcessEnv): Promise<T> {
  return withPidLock(path.join(stackDataDir(root, env), 'stack.lock'), 3 * READY_TIMEOUT_MS, fn);
}

/** One process of the stack, as `meterline stack status` lists it. */
export interface ProcessEntry {
  name: string;
  kind: ServerName | 'api' | 'consumer' | 'dispatcher' | 'billing';
  pid: number;
  ports: number[];
}

/** `processes.json`, or `processes-<roles>.json` for a `meterline up --role …` (one supervisor per role: systemd). */
function roleProcessesFile(root: string, env?: NodeJS.ProcessEnv, tag = ''): string {
  return path.join(stackDataDir(root, env), `processes${tag ? `-${tag}` : ''}.json`);
}

/** The role processes `meterline up` supervises, rewritten (atomically) whenever one (re)starts. */
export function writeRoleProcesses(root: string, processes: ProcessEntry[], env?: NodeJS.ProcessEnv, tag = ''): void {
  const file = roleProcessesFile(root, env, tag);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(processes, null, 2) + '\n');
  renameSync(tmp, file);
}

/** Every supervisor's role processes (stale entries included: callers check the pids). */
export function readRoleProcesses(root: string, env?: NodeJS.ProcessEnv): ProcessEntry[] {
  const dir = stackDataDir(root, env);
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /^processes(-[a-z,-]+)?\.json$/.test(f));
  } catch {
    return [];
  }
  return files.flatMap((f) => {
    try {
      const list = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ProcessEntry[];
      return Array.isArray(list) ? list.filter((p) => p && Number.isInteger(p.pid) && typeof p.name === 'string') : [];
    } catch {
      return [];
    }
  });
}
