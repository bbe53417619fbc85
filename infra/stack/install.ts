/**
 * Finding a server's binary and, when it is missing, installing its Debian package (as root, with
 * apt-get, non-interactively). What to look for and which package provides it are in each server's file.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { StackError, type ServerName } from './errors.js';
import type { ServerKind } from './launch.js';
import { withPidLock } from './state.js';

const SYSTEM_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/sbin', '/bin'];

export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `which`: first executable named `name` on PATH, then in the usual system dirs. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const d of [...dirs, ...SYSTEM_DIRS]) {
    const p = path.join(d, name);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    // stdout too goes to our stderr, so that JSON on stdout stays clean.
    const child = spawn(cmd, args, { stdio: ['ignore', process.stderr, process.stderr], env });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Every meterline process's apt-get runs hold this pid lock (state.ts withPidLock), one at a time. */
export const APT_LOCK_FILE = '/tmp/meterline-apt.lock';
/** Longest a run waits for the others (a chromium install over a slow mirror takes minutes). */
const APT_LOCK_WAIT_MS = 20 * 60_000;

/**
 * `apt-get <args>`, one at a time across processes: apt refuses at once ("Could not get lock
 * /var/lib/apt/lists/lock") while another apt-get runs, and two stacks starting together — the test suite's
 * two cluster tests on a fresh machine, each installing zookeeper — would fail each other. So each run holds
 * meterline's own lock, and waits for dpkg's (`DPkg::Lock::Timeout`) when something else holds that.
 */
export function aptGet(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  return withPidLock(
    APT_LOCK_FILE,
    APT_LOCK_WAIT_MS,
    () => run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], aptEnv),
    'another apt-get',
  );
}

/** What can be installed from Debian: a server (ServerKind) or a tool the operator needs (haproxy, promtool). */
export type Installable = Pick<ServerKind, 'debianPackage' | 'binaryDescription' | 'command'> & {
  name: string;
  /** Install without the package's recommended packages (chromium's pull in a desktop's worth). */
  noRecommends?: boolean;
};

const SERVER_KINDS: readonly string[] = ['postgres', 'nats', 'clickhouse', 'zookeeper', 'smtp'];
/** The server a StackError names (none for a tool). */
function serverOf(kind: Installable): ServerName | undefined {
  return SERVER_KINDS.includes(kind.name) ? (kind.name as ServerName) : undefined;
}

let aptUpdated: Promise<void> | null = null;
/** Within this process, one install at a time (the lock file orders processes). */
let aptQueue: Promise<unknown> = Promise.resolve();

function installHint(kind: Installable): string {
  return `sudo apt-get install -y ${kind.debianPackage}`;
}

async function aptInstall(kind: Installable): Promise<void> {
  aptUpdated ??= aptGet(['update']).then((code) => {
    if (code !== 0) {
      aptUpdated = null;
      throw new StackError(
        `apt-get update failed (exit ${code}); install ${kind.name} manually: ${installHint(kind)}`,
        serverOf(kind),
      );
    }
  });
  await aptUpdated;
  // An install queued before this one, here or in another process, may have brought it meanwhile.
  if (kind.command()) return;
  const code = await aptGet([
    'install',
    '-y',
    '-q',
    ...(kind.noRecommends ? ['--no-install-recommends'] : []),
    kind.debianPackage,
  ]);
  if (code !== 0) {
    throw new StackError(
      `apt-get install -y -q ${kind.debianPackage} failed (exit ${code}); install it manually: ${installHint(kind)}`,
      serverOf(kind),
    );
  }
}

/**
 * Make sure the server's binary is present. Installs the Debian package when
 * running as root on a system with apt-get; otherwise throws a StackError that
 * says exactly what to run.
 */
export async function ensureInstalled(kind: Installable): Promise<void> {
  if (kind.command()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = findOnPath('apt-get');
  if (!isRoot || !apt) {
    const why = !apt ? 'apt-get is not available' : 'not running as root';
    throw new StackError(
      `${kind.name} is not installed (${kind.binaryDescription} not found) and it cannot be installed automatically (${why}). ` +
        `Run: ${installHint(kind)}`,
      serverOf(kind),
    );
  }
  process.stderr.write(`[stack] ${kind.name} not found; installing Debian package ${kind.debianPackage}\n`);
  const job = aptQueue.then(() => aptInstall(kind));
  aptQueue = job.catch(() => undefined);
  await job;
  if (!kind.command()) {
    throw new StackError(
      `${kind.debianPackage} was installed but ${kind.binaryDescription} is still not found. Run: ${installHint(kind)}`,
      serverOf(kind),
    );
  }
}
