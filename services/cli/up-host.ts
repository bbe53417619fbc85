/**
 * `meterline up` on one host of an inventory (docs/hosts.md): this host's roles (or the `--role` ones)
 * against every host's servers, each role with its own login. No server is started here (`meterline stack up`
 * does that on each host) and nothing is migrated unless `--migrate`: an upgrade migrates once, then rolls the
 * processes (docs/upgrades.md).
 */
import { ensureCredentials, serverUsersOf } from '../../infra/stack/credentials.js';
import { profileEnvironment, roleEnvironment } from '../../infra/stack/host-env.js';
import type { HostSpec, Inventory } from '../../infra/stack/inventory.js';
import { SERVERS } from '../../infra/stack/servers.js';
import { writeRoleProcesses } from '../../infra/stack/state.js';
import { parseConfig } from '../../shared/config.js';
import { migrateAll } from '../migrate.js';
import { STACK_ROOT } from '../../shared/paths.js';
import type { Role } from '../role-names.js';
import { EXIT, printError, printResult } from './output.js';
import { Supervisor } from './supervisor.js';

export async function upHost(
  selected: { inventory: Inventory; host: HostSpec },
  roles: Role[],
  o: { migrate: boolean; tag: string },
): Promise<number> {
  const { inventory: inv, host } = selected;
  const log = (m: string) => process.stderr.write(m + '\n');
  const users = Object.fromEntries(
    (['postgres', 'nats', 'clickhouse'] as const).map((k) => [k, serverUsersOf(SERVERS[k])]),
  );
  const creds = ensureCredentials(STACK_ROOT, users, process.env, false);
  const envOf = (role: Role) => ({ ...process.env, ...roleEnvironment(inv, host, creds, role) });
  // A bad setting in the inventory stops here, naming the variable, rather than in every role's restart loop.
  for (const role of roles) parseConfig(envOf(role));
  const migrations = o.migrate
    ? await migrateAll(parseConfig({ ...process.env, ...profileEnvironment(inv, host, creds, 'migrate') }))
    : null;
  const supervisor = new Supervisor(roles, envOf, 1, (processes) =>
    writeRoleProcesses(STACK_ROOT, processes, process.env, o.tag),
  );
  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    (stopping ??= (async () => {
      log(`${host.name}: stopping ${roles.join(', ')}…`);
      await supervisor.stop();
    })());
  process.on('SIGINT', () => void shutdown().then(() => process.exit(0)));
  process.on('SIGTERM', () => void shutdown().then(() => process.exit(0)));
  let started;
  try {
    started = await supervisor.start();
  } catch (err) {
    printError((err as Error).message, { host: host.name });
    await shutdown();
    return EXIT.failure;
  }
  printResult({ host: host.name, address: host.address, roles: started, ...(migrations ? { migrations } : {}) });
  log(`${host.name}: ${roles.join(', ')} up`);
  await new Promise<never>(() => undefined); // run until a signal
  return EXIT.ok;
}
