/**
 * The customer registry's memory per customer (bench phase `attributed`): in a process of its own, started with
 * --expose-gc and the world's environment, one CustomerRegistry loads the whole customer bucket; the heap and
 * array buffers it added, after full collections, divided by its customers. Prints one JSON document.
 */
import { parseConfig } from '../shared/config.js';
import { connectNats, NatsNames } from '../shared/clients/nats.js';
import { createLogger } from '../shared/logging.js';
import { CustomerRegistry } from '../shared/customers/registry.js';

const gc = (globalThis as { gc?: () => void }).gc;
const used = () => {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc');
  const config = parseConfig();
  const nc = await connectNats(config.NATS_URL, 'bench-registry-memory');
  const registry = new CustomerRegistry(
    nc,
    new NatsNames(config.NATS_NAMESPACE),
    createLogger({ level: 'warn', name: 'bench' }),
  );
  const before = used();
  const t0 = performance.now();
  await registry.start(120_000);
  const loadS = (performance.now() - t0) / 1000;
  const after = used();
  const customers = registry.size;
  process.stdout.write(
    JSON.stringify({
      customers,
      bytes_per_customer: Math.round((after - before) / customers),
      load_s: Math.round(loadS * 100) / 100,
    }),
  );
  await registry.stop();
  await nc.close();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
