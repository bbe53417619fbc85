/**
 * The passwords of the stack's servers: generated at first start into `<root>/.data/credentials.json`
 * (mode 0600, never printed), one per server user, kept across restarts. A user added later (a new
 * role) gets its password the next time the stack starts.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { ServerName } from './errors.js';
import { StackError } from './errors.js';
import { stackDataDir, topologyName } from './state.js';

/** user → password, per server. */
export type Credentials = Partial<Record<ServerName, Record<string, string>>>;

/** `.data/credentials.json`; for a host of an inventory, the one beside the inventory (every host shares it). */
export function credentialsFile(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (topologyName(env) === 'hosts')
    return path.join(path.dirname(path.resolve(env.METERLINE_INVENTORY!)), 'credentials.json');
  return path.join(stackDataDir(root, env), 'credentials.json');
}

export function readCredentials(root: string, env?: NodeJS.ProcessEnv): Credentials {
  try {
    return JSON.parse(readFileSync(credentialsFile(root, env), 'utf8')) as Credentials;
  } catch {
    return {};
  }
}

/** URL-safe, so a password goes into a URL, a config file or SQL without escaping. */
function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The stored credentials, with a fresh password for every user that has none yet (written back, 0600). The hosts
 * of an inventory must all use the same file: there a missing password is an error unless `create` (the one
 * `meterline hosts init` that makes the file).
 */
export function ensureCredentials(
  root: string,
  users: Partial<Record<ServerName, readonly string[]>>,
  env: NodeJS.ProcessEnv = process.env,
  create = topologyName(env) !== 'hosts',
): Credentials {
  const creds = readCredentials(root, env);
  let changed = false;
  for (const [server, names] of Object.entries(users) as [ServerName, readonly string[]][]) {
    const mine = (creds[server] ??= {});
    for (const user of names) {
      if (typeof mine[user] === 'string' && mine[user]) continue;
      if (!create)
        throw new StackError(
          `${credentialsFile(root, env)} has no password for ${server} user ${user}: run \`meterline hosts init\` on one host and copy the inventory's directory to the others`,
        );
      mine[user] = newPassword();
      changed = true;
    }
  }
  if (changed) {
    const file = credentialsFile(root, env);
    const tmp = `${file}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(creds, null, 2) + '\n');
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  }
  return creds;
}

/** Every user a server needs a password for: its clients' logins and its own (ClickHouse's interserver user). */
export function serverUsersOf(kind: { userOf: Record<string, string>; serverUsers?: readonly string[] }): string[] {
  return [...new Set([...Object.values(kind.userOf), ...(kind.serverUsers ?? [])])].filter(Boolean);
}
