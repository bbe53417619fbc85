/**
 * Finding a server's binary and, when it is missing, installing its Debian package (as root, with
 * apt-get, non-interactively). What to look for and which package provides it are in each server's file.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { StackError } from './errors.js';
import type { ServerKind } from './launch.js';

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

let aptUpdated: Promise<void> | null = null;
/** apt/dpkg hold a global lock: serialise our installs. */
let aptQueue: Promise<unknown> = Promise.resolve();

function installHint(kind: ServerKind): string {
  return `sudo apt-get install -y ${kind.debianPackage}`;
}

async function aptInstall(kind: ServerKind): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  aptUpdated ??= run('apt-get', ['update'], env).then((code) => {
    if (code !== 0) {
      aptUpdated = null;
      throw new StackError(`apt-get update failed (exit ${code}); install ${kind.name} manually: ${installHint(kind)}`, kind.name);
    }
  });
  await aptUpdated;
  const code = await run('apt-get', ['install', '-y', '-q', kind.debianPackage], env);
  if (code !== 0) {
    throw new StackError(`apt-get install -y -q ${kind.debianPackage} failed (exit ${code}); install it manually: ${installHint(kind)}`, kind.name);
  }
}

/**
 * Make sure the server's binary is present. Installs the Debian package when
 * running as root on a system with apt-get; otherwise throws a StackError that
 * says exactly what to run.
 */
export async function ensureInstalled(kind: ServerKind): Promise<void> {
  if (kind.command()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = findOnPath('apt-get');
  if (!isRoot || !apt) {
    const why = !apt ? 'apt-get is not available' : 'not running as root';
    throw new StackError(
      `${kind.name} is not installed (${kind.binaryDescription} not found) and it cannot be installed automatically (${why}). ` +
        `Run: ${installHint(kind)}`,
      kind.name,
    );
  }
  process.stderr.write(`[stack] ${kind.name} not found; installing Debian package ${kind.debianPackage}\n`);
  const job = aptQueue.then(() => aptInstall(kind));
  aptQueue = job.catch(() => undefined);
  await job;
  if (!kind.command()) {
    throw new StackError(`${kind.debianPackage} was installed but ${kind.binaryDescription} is still not found. Run: ${installHint(kind)}`, kind.name);
  }
}
