import type { Config } from './config.js';
import { createLogger, type Logger } from './logging.js';
import { Metrics } from './metrics.js';
import { createPgPool, type PgPool } from './clients/postgres.js';
import { createClickhouse, type ClickHouseClient } from './clients/clickhouse.js';
import { connectNats, NatsNames, type NatsConnection } from './clients/nats.js';
import { withTimeout, type HealthReport } from './service.js';
import { setPasswordCost } from './auth/password.js';

/** The typed dependency bag every role receives. Built in a fixed order, closed in reverse. */
export interface Infra {
  config: Config;
  log: Logger;
  metrics: Metrics;
  pg: PgPool;
  nats: NatsConnection;
  natsNames: NatsNames;
  clickhouse: ClickHouseClient;
}

export async function createInfra(config: Config, role: string, opts: { pgPoolSize?: number } = {}): Promise<Infra> {
  const log = createLogger({ level: config.LOG_LEVEL, name: role });
  setPasswordCost(config.PASSWORD_SCRYPT_LOG2_N);
  const metrics = new Metrics(role);
  const pg = createPgPool(config.DATABASE_URL, opts.pgPoolSize ?? 10);
  const clickhouse = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  let nats: NatsConnection;
  try {
    nats = await connectNats(config.NATS_URL, `meterline-${role}-${process.pid}`);
  } catch (err) {
    await pg.end().catch(() => undefined);
    await clickhouse.close().catch(() => undefined);
    throw err;
  }
  return { config, log, metrics, pg, nats, natsNames: new NatsNames(config.NATS_NAMESPACE), clickhouse };
}

/** Publishers are flushed by their owners before this; here we only close pools and connections. */
export async function closeInfra(infra: Infra): Promise<void> {
  await Promise.allSettled([closeNats(infra.nats), infra.clickhouse.close(), infra.pg.end()]);
}

/** Drains when NATS answers; a drain cannot finish while the server is down, so fall back to close. */
async function closeNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return;
  try {
    await withTimeout(nc.drain(), 2_000, 'nats drain');
  } catch {
    await nc.close().catch(() => undefined);
  }
}

const PROBE_TIMEOUT_MS = 1_000;

export type ServerName = 'postgres' | 'nats' | 'clickhouse';
export const ALL_SERVERS: readonly ServerName[] = ['postgres', 'nats', 'clickhouse'];

/**
 * Asks each server a trivial question; a server that doesn't answer within a second is down. Every server
 * is reported; only those in `required` (what this process can't serve without) make the report not ok.
 */
export async function probeDependencies(
  infra: Infra,
  required: readonly ServerName[] = ALL_SERVERS,
): Promise<HealthReport> {
  const check = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await withTimeout(fn(), PROBE_TIMEOUT_MS, what);
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  };
  const [postgres, nats, clickhouse] = await Promise.all([
    check('postgres', () => infra.pg.query('SELECT 1')),
    check('nats', async () => {
      if (infra.nats.isClosed()) throw new Error('connection closed');
      await infra.nats.rtt();
    }),
    check('clickhouse', async () => {
      const r = await infra.clickhouse.ping();
      if (!r.success) throw r.error;
    }),
  ]);
  const checks = { postgres, nats, clickhouse };
  return { ok: required.every((s) => checks[s].ok), checks };
}
