/**
 * Locating (and, when possible, installing) the server binaries the local
 * stack needs: PostgreSQL, nats-server and clickhouse-server.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { StackError, type ServerName } from './errors.js';

/** Debian package that provides each server. */
export const DEBIAN_PACKAGES: Record<ServerName, string> = {
  postgres: 'postgresql',
  nats: 'nats-server',
  clickhouse: 'clickhouse-server',
};

const SYSTEM_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/sbin', '/bin'];

function isExecutableFile(p: string): boolean {
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
  versions.sort(compareVersions).reverse();
  for (const v of versions) {
    const dir = path.join(base, v, 'bin');
    if (isExecutableFile(path.join(dir, 'postgres')) && isExecutableFile(path.join(dir, 'initdb'))) return dir;
  }
  const onPath = findOnPath('postgres');
  if (onPath) {
    const dir = path.dirname(onPath);
    if (isExecutableFile(path.join(dir, 'initdb'))) return dir;
  }
  return null;
}

/** How to launch a server: the executable and the arguments that precede our own. */
export interface ServerCommand {
  command: string;
  args: string[];
}

export function serverCommand(server: ServerName): ServerCommand | null {
  switch (server) {
    case 'postgres': {
      const dir = postgresBinDir();
      return dir ? { command: path.join(dir, 'postgres'), args: [] } : null;
    }
    case 'nats': {
      const p = findOnPath('nats-server');
      return p ? { command: p, args: [] } : null;
    }
    case 'clickhouse': {
      const p = findOnPath('clickhouse-server');
      if (p) return { command: p, args: [] };
      const multi = findOnPath('clickhouse');
      return multi ? { command: multi, args: ['server'] } : null;
    }
  }
}

/** Absolute path of the server's main binary, or null when it is not installed. */
export function binaryPath(server: ServerName): string | null {
  return serverCommand(server)?.command ?? null;
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

function installHint(server: ServerName): string {
  return `sudo apt-get install -y ${DEBIAN_PACKAGES[server]}`;
}

async function aptInstall(server: ServerName): Promise<void> {
  const pkg = DEBIAN_PACKAGES[server];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    aptUpdated = run('apt-get', ['update'], env).then((code) => {
      if (code !== 0) {
        aptUpdated = null;
        throw new StackError(`apt-get update failed (exit ${code}); install ${server} manually: ${installHint(server)}`, server);
      }
    });
  }
  await aptUpdated;
  const code = await run('apt-get', ['install', '-y', '-q', pkg], env);
  if (code !== 0) {
    throw new StackError(`apt-get install -y -q ${pkg} failed (exit ${code}); install it manually: ${installHint(server)}`, server);
  }
}

/**
 * Make sure the server's binary is present. Installs the Debian package when
 * running as root on a system with apt-get; otherwise throws a StackError that
 * says exactly what to run.
 */
export async function ensureInstalled(server: ServerName): Promise<void> {
  if (serverCommand(server)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = findOnPath('apt-get');
  if (!isRoot || !apt) {
    const why = !apt ? 'apt-get is not available' : 'not running as root';
    throw new StackError(
      `${server} is not installed (${binaryDescription(server)} not found) and it cannot be installed automatically (${why}). ` +
        `Run: ${installHint(server)}`,
      server,
    );
  }
  process.stderr.write(`[stack] ${server} not found; installing Debian package ${DEBIAN_PACKAGES[server]}\n`);
  const job = aptQueue.then(() => aptInstall(server));
  aptQueue = job.catch(() => undefined);
  await job;
  if (!serverCommand(server)) {
    throw new StackError(
      `${DEBIAN_PACKAGES[server]} was installed but ${binaryDescription(server)} is still not found. Run: ${installHint(server)}`,
      server,
    );
  }
}

function binaryDescription(server: ServerName): string {
  switch (server) {
    case 'postgres':
      return '/usr/lib/postgresql/*/bin/postgres';
    case 'nats':
      return 'nats-server';
    case 'clickhouse':
      return 'clickhouse-server';
  }
}
