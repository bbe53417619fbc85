/**
 * Entry point of one process role: `node dist/services/main.js <api|consumer|dispatcher|billing>`.
 * Parses config once, builds infrastructure, starts the role; SIGINT/SIGTERM stop it in order.
 */
import { parseConfig, ConfigError } from '../shared/config.js';
import { createInfra, closeInfra } from '../shared/infra.js';
import { createRole, ROLES, type Role } from './roles.js';
import { startMetricsEndpoint, type MetricsEndpoint } from './metrics-endpoint.js';

async function main(): Promise<void> {
  const role = process.argv[2] as Role;
  if (!ROLES.includes(role)) {
    process.stderr.write(JSON.stringify({ error: `usage: main.js <${ROLES.join('|')}>` }) + '\n');
    process.exit(2);
  }
  let config;
  try {
    config = parseConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(JSON.stringify({ error: 'invalid configuration', problems: err.problems }) + '\n');
      process.exit(78); // EX_CONFIG: the supervisor does not restart a misconfigured role
    }
    throw err;
  }
  const infra = await createInfra(config, role);
  const service = await createRole(role, infra);
  let stopping = false;
  let endpoint: MetricsEndpoint | undefined;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    infra.log.info({ signal }, 'stopping');
    // The api drains in-flight requests for up to SHUTDOWN_DRAIN_SECONDS first; past that plus 20 s, give up.
    const force = setTimeout(() => process.exit(1), config.SHUTDOWN_DRAIN_SECONDS * 1000 + 20_000).unref();
    await service.stop();
    await endpoint?.close();
    await closeInfra(infra);
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // The supervisor dies → we go too, never orphaned.
  process.on('disconnect', () => void shutdown('parent-gone'));
  await service.start();
  // The api serves /metrics on its own port; the other roles on METRICS_HOST:METRICS_PORT.
  if (!('port' in service))
    endpoint = await startMetricsEndpoint({
      host: config.METRICS_HOST,
      port: config.METRICS_PORT,
      metrics: infra.metrics,
      health: () => service.health(),
    });
  const port = 'port' in service ? (service as { port: number }).port : endpoint?.port;
  if (process.send) process.send({ type: 'ready', role, port });
}

main().catch((err) => {
  process.stderr.write(JSON.stringify({ error: (err as Error).message, stack: (err as Error).stack }) + '\n');
  process.exit(1);
});
