import { existsSync } from 'node:fs';
import path from 'node:path';
import { credentialsFile, ensureCredentials, serverUsersOf } from '../../infra/stack/credentials.js';
import { haproxyConfig, statsCredential } from '../../infra/stack/haproxy.js';
import { SECRET_FILE } from '../../infra/stack/host-env.js';
import { INVENTORY_VARIABLE, inventoryDir, readInventory } from '../../infra/stack/inventory.js';
import { SERVERS } from '../../infra/stack/servers.js';
import { STACK_ROOT } from '../../shared/paths.js';
import { ensureSecretFile } from '../../shared/secret.js';
import { EXIT, parseFlags, printResult, UsageError } from './output.js';

function inventoryFile(): string {
  const file = process.env[INVENTORY_VARIABLE];
  if (!file) throw new UsageError(`--inventory FILE (or ${INVENTORY_VARIABLE}) is required`);
  return path.resolve(file);
}

/**
 * `meterline hosts init` — checks the inventory and writes, beside it, what every host must share: a password
 * per server user (`credentials.json`) and SECRET_KEY (`secret.key`), both 0600, kept when they exist.
 * `meterline hosts haproxy [--bind ADDR:PORT] [--stats-port N [--stats-bind ADDR]]` — prints an haproxy.cfg for the
 * inventory's apis; the stats page (loopback unless --stats-bind) asks for user `meterline` and a password derived
 * from secret.key, written in the configuration.
 */
export async function hostsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'init') {
    parseFlags(rest, {});
    const inv = readInventory(inventoryFile());
    // The file is the inventory's, not a host's: make it as `hosts` topology would read it.
    const env = { ...process.env, [INVENTORY_VARIABLE]: inv.file, METERLINE_HOST: inv.hosts[0]!.name };
    const file = credentialsFile(STACK_ROOT, env);
    const secretFile = path.join(inventoryDir(inv), SECRET_FILE);
    const existed = { credentials: existsSync(file), secret: existsSync(secretFile) };
    const users = Object.fromEntries(
      (['postgres', 'nats', 'clickhouse'] as const).map((k) => [k, serverUsersOf(SERVERS[k])]),
    );
    ensureCredentials(STACK_ROOT, users, env, true);
    await ensureSecretFile(secretFile);
    printResult({
      inventory: inv.file,
      hosts: inv.hosts.map((h) => ({ name: h.name, address: h.address, servers: h.servers, roles: h.roles })),
      credentials_file: file,
      secret_key_file: secretFile,
      created: [...(existed.credentials ? [] : [file]), ...(existed.secret ? [] : [secretFile])],
      next: `copy ${inventoryDir(inv)} to every host, then on each: meterline stack up --inventory ${inv.file} --host <name>`,
    });
    return EXIT.ok;
  }
  if (sub === 'haproxy') {
    const flags = parseFlags(rest, { strings: ['bind', 'stats-port', 'stats-bind'] });
    const inv = readInventory(inventoryFile());
    const bind = /^(.+):(\d+)$/.exec((flags.bind as string | undefined) ?? '0.0.0.0:80');
    if (!bind) throw new UsageError('--bind must be ADDRESS:PORT');
    const statsPort = flags['stats-port'] === undefined ? undefined : Number(flags['stats-port']);
    if (statsPort !== undefined && !(Number.isInteger(statsPort) && statsPort > 0 && statsPort < 65536))
      throw new UsageError('--stats-port must be a port number');
    const stats =
      statsPort === undefined
        ? undefined
        : { port: statsPort, host: flags['stats-bind'] as string | undefined, credential: statsCredential(inv) };
    process.stdout.write(haproxyConfig(inv, { bind: { host: bind[1]!, port: Number(bind[2]) }, stats }));
    return EXIT.ok;
  }
  throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand (init or haproxy)');
}
