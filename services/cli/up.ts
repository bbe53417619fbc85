import { parseConfig, ConfigError } from '../../shared/config.js';
import { migrateAll } from '../../shared/migrate.js';
import { STACK_ROOT, repoPath } from '../../shared/paths.js';
import { ensureSecretFile } from '../../shared/secret.js';
import { stackUp, stackDown, stackStatus } from '../../infra/stack/stack.js';
import { topologyName, writeRoleProcesses } from '../../infra/stack/state.js';
import { ROLES, type Role } from '../roles.js';
import { Supervisor } from './supervisor.js';
import { firstRunLines } from '../console/first-run.js';
import { consoleRedirectUri } from '../console/client.js';
import { EXIT, printError, printResult } from './output.js';
import { databaseIdentity, forgetRunningApi, recordRunningApi } from './running-api.js';

/**
 * `meterline up` (what `npm start` runs): local stack → migrations → every role → base URL.
 * Ctrl-C stops the roles in order, then the servers this command launched itself.
 */
export async function upCommand(): Promise<number> {
  const log = (m: string) => process.stderr.write(m + '\n');
  const before = await stackStatus({ root: STACK_ROOT, env: process.env });
  const runningBefore = new Set(before.servers.filter((s) => s.running).map((s) => s.name));
  const stack = await stackUp({ root: STACK_ROOT, env: process.env, log });
  const launchedHere = stack.servers.filter((s) => !s.external && !runningBefore.has(s.name)).map((s) => s.name);

  // Migrations run as the schema's owner; each role connects as itself (least privilege on servers the stack secured).
  // The cluster's settings (stream replicas, ClickHouse cluster) unless the operator set them.
  const env = {
    ...stack.settings,
    ...process.env,
    SECRET_KEY: process.env.SECRET_KEY || (await ensureSecretFile(repoPath('.data/secret.key'))),
  };
  const envOf = (role: Role) => ({ ...env, ...stack.profiles[role] });
  let config;
  try {
    config = parseConfig({ ...env, ...stack.profiles.migrate });
  } catch (err) {
    if (err instanceof ConfigError) {
      printError('invalid configuration', { problems: err.problems });
      return EXIT.config;
    }
    throw err;
  }
  const migrations = await migrateAll(config);
  // The cluster topology runs two processes of every role (the api ones share the port: SO_REUSEPORT).
  const copies = topologyName(process.env) === 'cluster' ? 2 : 1;
  const supervisor = new Supervisor(ROLES, envOf, copies, (processes) => writeRoleProcesses(STACK_ROOT, processes));

  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    (stopping ??= (async () => {
      log('stopping roles…');
      forgetRunningApi();
      await supervisor.stop();
      if (launchedHere.length) {
        const stopped = await stackDown({ root: STACK_ROOT });
        log(`stopped servers: ${stopped.stopped.map((s) => `${s.name} (${s.pid})`).join(', ') || 'none'}`);
      }
    })());
  process.on('SIGINT', () => void shutdown().then(() => process.exit(0)));
  process.on('SIGTERM', () => void shutdown().then(() => process.exit(0)));

  let roles;
  try {
    roles = await supervisor.start();
  } catch (err) {
    printError((err as Error).message);
    await shutdown();
    return EXIT.failure;
  }
  // Other commands (another terminal) sign tokens for this issuer and call this api (services/cli/running-api.ts).
  recordRunningApi({
    base_url: config.PUBLIC_BASE_URL,
    pid: process.pid,
    database: databaseIdentity(config.DATABASE_URL),
  });
  printResult({
    base_url: config.PUBLIC_BASE_URL,
    console_url: consoleRedirectUri(config.PUBLIC_BASE_URL),
    listening: `http://${config.HOST}:${(roles.api ?? roles['api-1'])?.port ?? config.PORT}`,
    roles,
    servers: stack.servers,
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
