/**
 * One api process for the benchmark: the same role services/main.js starts (createRole('api')), plus an
 * IPC channel so the benchmark can read this process's counters even when several processes share the
 * port (SO_REUSEPORT makes GET /metrics land on any of them).
 */
import { parseConfig } from '../shared/config.js';
import { createInfra, closeInfra } from '../shared/infra.js';
import { createRole } from '../services/roles.js';

async function main(): Promise<void> {
  const config = parseConfig();
  const infra = await createInfra(config, 'api');
  const service = await createRole('api', infra);
  await service.start();
  process.on('message', async (m: { type: string; id?: number }) => {
    if (m.type === 'metrics') {
      const metrics = await infra.metrics.registry.getMetricsAsJSON();
      process.send!({ type: 'metrics', id: m.id, metrics });
    } else if (m.type === 'stop') {
      await stop();
    }
  });
  const stop = async () => {
    await service.stop();
    await closeInfra(infra);
    process.exit(0); // also writes --cpu-prof profiles
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.on('disconnect', () => void stop());
  process.send!({ type: 'ready', port: config.PORT });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
