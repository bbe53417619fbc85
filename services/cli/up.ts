import { parseConfig, ConfigError } from '../../shared/config.js';
import { migrateAll } from '../migrate.js';
import { STACK_ROOT, stackSecretFile } from '../../shared/paths.js';
import { ensureSecretFile } from '../../shared/secret.js';
import { stackUp, stackDown, stackStatus } from '../../infra/stack/stack.js';
import { topologyName, writeRoleProcesses } from '../../infra/stack/state.js';
import { ROLES, type Role } from '../role-names.js';
import { Supervisor } from './supervisor.js';
import { EXIT, parseFlags, printError, printResult, UsageError } from './output.js';
import { databaseIdentity, forgetRunningApi, recordRunningApi } from './running-api.js';
import { selectedHost } from '../../infra/stack/inventory.js';
import { startLocalStripe, wantsLocalStripe } from '../../infra/stack/stripe-local.js';

/** `--role api,consumer` (repeatable): the roles to run, in ROLES order; default every role. */
function chosenRoles(flag: string[] | undefined, fallback: readonly Role[]): Role[] {
  if (!flag) return [...fallback];
  const names = flag.flatMap((f) => f.split(',')).map((r) => r.trim());
  const unknown = names.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length || names.length === 0)
    throw new UsageError(`--role takes ${ROLES.join(', ')} (comma-separated), got "${flag.join(',')}"`);
  return ROLES.filter((r) => names.includes(r));
}

/**
 * `meterline up` (what `npm start` runs): local stack → migrations → every role (or the `--role` ones) → base URL.
 * Ctrl-C stops the roles in order, then the servers this command launched itself. On one host of an inventory
 * (METERLINE_INVENTORY, METERLINE_HOST): that host's roles only, against the inventory's servers (up-host.ts).
 */
export async function upCommand(args: string[] = []): Promise<number> {
  const flags = parseFlags(args, { multi: ['role'], booleans: ['migrate'] });
  const roleFlag = flags.role as string[] | undefined;
  const selected = selectedHost(process.env);
  if (selected) {
    const roles = chosenRoles(roleFlag, selected.host.roles);
    const { upHost } = await import('./up-host.js');
    return upHost(selected, roles, { migrate: flags.migrate === true, tag: roleFlag ? roles.join(',') : '' });
  }
  const roles = chosenRoles(roleFlag, ROLES);
  const log = (m: string) => process.stderr.write(m + '\n');
  const before = await stackStatus({ root: STACK_ROOT, env: process.env });
  const runningBefore = new Set(before.servers.filter((s) => s.running).map((s) => s.name));
  const stack = await stackUp({ root: STACK_ROOT, env: process.env, log });
  const launchedHere = stack.servers.filter((s) => !s.external && !runningBefore.has(s.name)).map((s) => s.name);

  // Migrations run as the schema's owner; each role connects as itself (least privilege on servers the stack secured).
  // The cluster's settings (stream replicas, ClickHouse cluster) unless the operator set them.
  const env: NodeJS.ProcessEnv = {
    ...stack.settings,
    ...process.env,
    SECRET_KEY: process.env.SECRET_KEY || (await ensureSecretFile(stackSecretFile())),
  };
  // PAYMENT_PROCESSOR=stripe without a key: the Stripe simulator stands in for Stripe (docs/payments.md).
  const localStripe = wantsLocalStripe(process.env) ? await startLocalStripe(STACK_ROOT, process.env) : null;
  if (localStripe) {
    Object.assign(env, localStripe.settings);
    log(`PAYMENT_PROCESSOR=stripe without a key: charging through the Stripe simulator at ${localStripe.url}`);
  }
  const envOf = (role: Role) => ({ ...env, ...stack.profiles[role] });
  let config;
  try {
    config = parseConfig({ ...env, ...stack.profiles.migrate });
  } catch (err) {
    if (err instanceof ConfigError) {
      await localStripe?.stop();
      printError('invalid configuration', { problems: err.problems });
      return EXIT.config;
    }
    throw err;
  }
  await localStripe?.registerWebhook(config.PUBLIC_BASE_URL);
  const migrations = await migrateAll(config);
  // The cluster topology runs two processes of every role (the api ones share the port: SO_REUSEPORT).
  const copies = topologyName(process.env) === 'cluster' ? 2 : 1;
  const supervisor = new Supervisor(roles, envOf, copies, (processes) =>
    writeRoleProcesses(STACK_ROOT, processes, process.env, roleFlag ? roles.join(',') : ''),
  );

  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    (stopping ??= (async () => {
      log('stopping roles…');
      forgetRunningApi();
      await supervisor.stop();
      await localStripe?.stop();
      if (launchedHere.length) {
        const stopped = await stackDown({ root: STACK_ROOT });
        log(`stopped servers: ${stopped.stopped.map((s) => `${s.name} (${s.pid})`).join(', ') || 'none'}`);
      }
    })());
  process.on('SIGINT', () => void shutdown().then(() => process.exit(0)));
  process.on('SIGTERM', () => void shutdown().then(() => process.exit(0)));

  let started;
  try {
    started = await supervisor.start();
  } catch (err) {
    printError((err as Error).message);
    await shutdown();
    return EXIT.failure;
  }
  // Loaded here, not at the top: a host's `meterline up --role …` never needs the console's code.
  const { firstRunLines } = await import('../console/first-run.js');
  const { consoleRedirectUri } = await import('../console/client.js');
  // Other commands (another terminal) sign tokens for this issuer and call this api (services/cli/running-api.ts).
  recordRunningApi({
    base_url: config.PUBLIC_BASE_URL,
    pid: process.pid,
    database: databaseIdentity(config.DATABASE_URL),
  });
  printResult({
    base_url: config.PUBLIC_BASE_URL,
    console_url: consoleRedirectUri(config.PUBLIC_BASE_URL),
    listening: `http://${config.HOST}:${(started.api ?? started['api-1'])?.port ?? config.PORT}`,
    roles: started,
    servers: stack.servers,
    ...(localStripe ? { stripe_simulator: localStripe.url } : {}),
    migrations,
  });
  log(`meterline is up at ${config.PUBLIC_BASE_URL} — Ctrl-C to stop`);
  for (const line of await firstRunLines(config).catch((err) => [
    `(could not check for accounts: ${(err as Error).message})`,
  ]))
    log(line);
  await new Promise<never>(() => undefined); // run until a signal
  return EXIT.ok;
}
