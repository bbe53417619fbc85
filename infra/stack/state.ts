/**
 * What the stack remembers between commands: `<root>/.data/stack.json` (the pid, URL and ports of every
 * server instance it started, written atomically) and the lock that serialises stack operations.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
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

export function stackDataDir(root: string): string {
  return path.join(path.resolve(root), '.data');
}

function stateFile(root: string): string {
  return path.join(stackDataDir(root), 'stack.json');
}

export function readState(root: string): StackState {
  let parsed: Partial<StackState>;
  try {
    parsed = JSON.parse(readFileSync(stateFile(root), 'utf8')) as Partial<StackState>;
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

export function writeState(root: string, state: StackState): void {
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

/** Takes the lock file if free (or stale: its holder is gone); false while someone else holds it. */
function tryLock(lock: string, deadline: number): boolean {
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
    throw new StackError(`another stack operation (pid ${holder || '?'}) has held ${lock} for too long; remove it if that process is gone`);
  }
  return false;
}

/** Serialise stack operations (several `npm test` / `npm start` at once) with a pid lock file. */
export async function withLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(stackDataDir(root), 'stack.lock');
  const deadline = Date.now() + 3 * READY_TIMEOUT_MS;
  await waitFor(async () => tryLock(lock, deadline), { timeoutMs: deadline - Date.now() + 1_000, intervalMs: 200, what: `the stack lock ${lock}` });
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
