import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from '../../infra/stack/process.js';
import { stackDataDir } from '../../infra/stack/state.js';
import { STACK_ROOT } from '../../shared/paths.js';
import { stripTrailing } from '../../shared/strings.js';
import { printWarning } from './output.js';

/**
 * Which api `meterline up` is serving, so that the other commands (another terminal, no PUBLIC_BASE_URL)
 * sign tokens for the issuer that api checks and call the api where it listens. `<stack>/.data/api.json`:
 * written once the roles are ready, removed on shutdown; a record whose `up` process is gone is ignored.
 * It names the database the api uses: a command working on another database (a test's, a remote one) is
 * not talking to that api.
 */
export interface RunningApi {
  /** The api's PUBLIC_BASE_URL: its OAuth issuer and public address. */
  base_url: string;
  /** The `meterline up` process. */
  pid: number;
  /** host:port/database of its DATABASE_URL (no user, no password). */
  database: string;
}

function apiFile(root: string): string {
  return path.join(stackDataDir(root), 'api.json');
}

/** host:port/database — who the api's data belongs to, whatever user connects. */
export function databaseIdentity(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return databaseUrl;
  }
}

export function recordRunningApi(api: RunningApi, root = STACK_ROOT): void {
  const file = apiFile(root);
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(api, null, 2) + '\n');
  renameSync(tmp, file);
}

/** Removes the record if it is this process's (a second `up` may have replaced it). */
export function forgetRunningApi(pid = process.pid, root = STACK_ROOT): void {
  if (readRecord(root)?.pid === pid) rmSync(apiFile(root), { force: true });
}

function readRecord(root: string): RunningApi | undefined {
  try {
    const r = JSON.parse(readFileSync(apiFile(root), 'utf8')) as Partial<RunningApi>;
    if (typeof r.base_url === 'string' && Number.isInteger(r.pid) && typeof r.database === 'string')
      return r as RunningApi;
  } catch {
    // none, or unreadable: no running api known
  }
  return undefined;
}

/** The api `meterline up` runs on this database, if one is running. */
export function runningApi(databaseUrl: string, root = STACK_ROOT): RunningApi | undefined {
  const r = readRecord(root);
  if (!r || !isAlive(r.pid) || r.database !== databaseIdentity(databaseUrl)) return undefined;
  return r;
}

/**
 * The base URL a command talks to and signs tokens for: PUBLIC_BASE_URL when the operator set it (with a
 * warning on stderr when the running api serves another one: its tokens would be refused there), else the
 * running api's, else the configured default (`http://HOST:PORT`).
 */
export function apiBaseUrl(env: NodeJS.ProcessEnv, configured: string, databaseUrl: string): string {
  const running = runningApi(databaseUrl);
  const explicit = env.PUBLIC_BASE_URL?.trim();
  if (!running) {
    if (!explicit)
      printWarning(
        `no running api found for this database (meterline up records it); using ${configured} — set PUBLIC_BASE_URL to the api's base URL if it runs elsewhere`,
        { public_base_url: configured },
      );
    return configured;
  }
  if (explicit && stripSlash(explicit) !== stripSlash(running.base_url)) {
    printWarning(
      `PUBLIC_BASE_URL (${configured}) is not the base URL of the running api (${running.base_url}): tokens signed for ${configured} are refused there`,
      { public_base_url: configured, running_api: running.base_url },
    );
    return configured;
  }
  return running.base_url;
}

const stripSlash = (u: string) => stripTrailing(u, '/');
