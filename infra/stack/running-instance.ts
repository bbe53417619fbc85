/**
 * Finding and reusing a server this stack already runs (stack.ts): which pids are ours (the record in
 * stack.json, then `<dir>/pid`), what stack.json keeps of an instance, and whether a running one answers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { READY_TIMEOUT_MS } from './launch.js';
import type { Credentials } from './credentials.js';
import { isAlive, ownsPid, stopPid, waitFor } from './process.js';
import type { ServerRecord } from './state.js';
import type { Instance } from './topology.js';

type Log = (m: string) => void;

function readPidFile(dir: string): number | null {
  try {
    const n = Number(readFileSync(path.join(dir, 'pid'), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** Already-running processes of this instance: the recorded one first, then `<dir>/pid`; only pids we own. */
export function candidates(i: Instance, rec: ServerRecord | undefined, creds: Credentials): ServerRecord[] {
  const out: ServerRecord[] = [];
  if (rec && ownsPid(rec.pid, i.dir)) out.push(rec);
  const filePid = readPidFile(i.dir);
  if (filePid && filePid !== rec?.pid && ownsPid(filePid, i.dir))
    out.push(newRecord(i, filePid, i.kind.logFile(i.dir), Boolean(creds[i.kind.name])));
  return out;
}

/** What stack.json keeps of an instance: never a password. */
export function newRecord(i: Instance, pid: number, logFile: string, secured: boolean): ServerRecord {
  return {
    name: i.name,
    kind: i.kind.name,
    pid,
    url: i.url,
    logFile,
    dir: i.dir,
    ports: i.ports,
    secured,
    startedAt: new Date().toISOString(),
  };
}

/** Reuse a running instance if it answers (waiting the usual time while it is still starting); stop it if it never does. */
export async function reuse(i: Instance, c: ServerRecord, url: string, log: Log): Promise<boolean> {
  let r = await i.kind.probe(url);
  if (!r.ok) {
    log(`${i.name}: pid ${c.pid} is running but not answering yet (${r.detail ?? ''}); waiting`);
    await waitFor(async () => !isAlive(c.pid) || (r = await i.kind.probe(url)).ok, {
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
