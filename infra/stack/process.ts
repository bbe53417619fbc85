/**
 * The generic process layer of the launcher: is a pid alive and ours, stop it, wait for a condition,
 * spawn a detached server, check a port is free, read the tail of its log. Nothing here knows a server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import net from 'node:net';
import { StackError, type ServerName } from './errors.js';

export const LOG_TAIL_LINES = 20;

/** The OS account a server runs as when it must not run as root (Postgres). */
export interface RunAs {
  user: string;
  uid: number;
  gid: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function errMessage(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) return e.errors.map(errMessage).join('; ');
  if (e instanceof Error) return e.message || (e as NodeJS.ErrnoException).code || e.name;
  return String(e);
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

export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Fields of /proc/<pid>/stat after the command name: [0] state, [1] ppid, [2] process group. */
function procStat(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces; everything after the last ')' is space separated.
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
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
  return !(st && (st[0] === 'Z' || st[0] === 'X'));
}

/** The process's command line (argv joined by spaces), or null where /proc is unavailable. */
function processCommandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return null;
  }
}

/** Is `pid` alive and (where /proc tells us) a server started in `dir`? Guards against a recycled pid. */
export function ownsPid(pid: number, dir: string): boolean {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  return cmd === null || cmd.includes(dir);
}

function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

/**
 * Stop a process: send `signal` (SIGTERM by default), poll until it has exited,
 * SIGKILL it (and its process group, when it leads one) after `timeoutMs`.
 */
export async function stopPid(pid: number, timeoutMs = 30_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!isAlive(pid) || !signalPid(pid, signal)) return;
  const exited = async () => !isAlive(pid);
  try {
    return await waitFor(exited, { timeoutMs, intervalMs: 50, what: `pid ${pid} to exit after ${signal}` });
  } catch {
    /* fall through to SIGKILL */
  }
  const leadsGroup = Number(procStat(pid)?.[2]) === pid;
  if (!signalPid(leadsGroup ? -pid : pid, 'SIGKILL')) return;
  await waitFor(exited, { timeoutMs: 10_000, intervalMs: 50, what: `pid ${pid} to exit after SIGKILL` });
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

/** Spawn a server detached from us (it outlives the launcher), stdout and stderr appended to `logFile`. */
export function spawnDetached(
  command: string,
  args: string[],
  o: { cwd: string; logFile: string; runAs?: RunAs | null; env?: NodeJS.ProcessEnv; stdin?: 'ignore' | 'pipe' },
): ChildProcess {
  const fd = openSync(o.logFile, 'a');
  try {
    return spawn(command, args, {
      cwd: o.cwd,
      detached: true,
      stdio: [o.stdin ?? 'ignore', fd, fd],
      env: o.env ?? process.env,
      ...(o.runAs ? { uid: o.runAs.uid, gid: o.runAs.gid } : {}),
    });
  } finally {
    closeSync(fd);
  }
}

/** Resolves with how a child ended, or with the error that kept it from starting. */
export function exitOf(child: ChildProcess): Promise<ExitInfo | Error> {
  return new Promise((resolve) => {
    child.on('error', resolve);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

export function describeExit(e: ExitInfo | Error): string {
  if (e instanceof Error) return errMessage(e);
  return e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
}

function portHolder(port: number): string | null {
  try {
    const r = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', timeout: 2000 });
    const m = /users:\(\("([^"]+)",pid=(\d+)/.exec(r.stdout ?? '');
    return m ? `${m[1]} (pid ${m[2]})` : null;
  } catch {
    return null;
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on now (for private servers of tests and benchmarks). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
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
