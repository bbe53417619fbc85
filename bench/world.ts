/**
 * An isolated world for one benchmark run on the local stack: its own Postgres database, ClickHouse
 * database and NATS namespace (so runs never mix with tests or with each other), an account, a token,
 * the meters and a product, all created the way production creates them. Dropped at the end unless --keep.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kvm } from '@nats-io/kv';
import { parseConfig, type Config } from '../shared/config.js';
import { migrateAll } from '../services/migrate.js';
import { createIsolatedWorld } from '../infra/isolated-world.js';
import { connectNats, NatsNames } from '../shared/clients/nats.js';
import { createAccount } from '../services/domain/accounts/store.js';
import { SigningKeys } from '../shared/auth/signing-keys.js';
import { issueAccessToken } from '../shared/auth/access-tokens.js';
import { newId } from '../shared/ids.js';
import { putMeter, type MeterRecord } from '../shared/meters/record.js';
import { insertProduct } from '../services/domain/products/store.js';
import { UsageShards } from '../shared/clients/usage-shards.js';
import { registerUniqueMeter } from '../services/domain/usage/unique-rollups-store.js';

export interface BenchWorld {
  name: string;
  config: Config;
  /** Environment for the role processes. */
  env: Record<string, string>;
  accountId: string;
  token: string;
  meterId: string;
  probeMeterId: string;
  /** The usage-read phases' meter (10 M records loaded straight into ClickHouse). */
  readsMeterId: string;
  /** A catalog product for the GET /v1/products/{id} phase. */
  productId: string;
  drop(): Promise<void>;
}

export async function createWorld(
  urls: { DATABASE_URL: string; NATS_URL: string; CLICKHOUSE_URL: string },
  port: number,
  streamBytes: number,
): Promise<BenchWorld> {
  const name = `bench_${Date.now().toString(36)}_${randomBytes(2).toString('hex')}`;
  const world = await createIsolatedWorld(urls, name);
  const env: Record<string, string> = {
    ...world.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    SECRET_KEY: process.env.SECRET_KEY || randomBytes(32).toString('hex'),
    USAGE_STREAM_MAX_BYTES: String(streamBytes),
    LOG_LEVEL: 'warn',
    // The benchmark measures capacity: its account isn't rate-limited (the noisy-neighbour phase sets its own limit).
    LIMIT_INGEST_RECORDS_PER_SECOND: '10000000',
    LIMIT_REQUESTS_PER_SECOND: '1000000',
    LIMIT_ATTRIBUTED_RECORDS_PER_SECOND: '100000000',
  };
  const config = parseConfig(env);
  try {
    await migrateAll(config);
    return await populate(name, config, env, new NatsNames(config.NATS_NAMESPACE), world.drop);
  } catch (err) {
    await world.drop().catch(() => undefined);
    throw err;
  }
}

async function populate(
  name: string,
  config: Config,
  env: Record<string, string>,
  names: NatsNames,
  drop: () => Promise<void>,
): Promise<BenchWorld> {
  const nc = await connectNats(config.NATS_URL, 'bench-setup');

  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  const ids = await createAccount(pool, {
    name: 'Benchmark',
    email: `bench-${name}@example.com`,
    password: randomBytes(12).toString('hex'),
  });
  const clientId = newId('cli');
  await pool.query(
    'INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, is_public) VALUES ($1, $2, NULL, $3, true)',
    [clientId, 'benchmark', ['http://127.0.0.1/cb']],
  );
  const keys = new SigningKeys(pool, config.SECRET_KEY);
  await keys.load();
  const { token } = await issueAccessToken(
    keys,
    { accountId: ids.account_id, userId: ids.user_id, clientId, scopes: ['write'] },
    { issuer: config.PUBLIC_BASE_URL, ttlSeconds: 6 * 3600 },
  );
  const kv = await new Kvm(nc).open(names.meterBucket);
  const meter = (label: string) => insertBenchMeter(pool, kv, config, ids.account_id, label);
  const meterId = await meter('bench load');
  const probeMeterId = await meter('bench lag probe');
  const readsMeterId = await meter('bench usage reads');
  // Products are the deployment's catalog (POST is admin-only); the store's insert is what that route runs.
  const product = await insertProduct(pool, {
    name: 'Benchmark plan',
    price: '10.00',
    currency: 'USD',
    pricing: 'flat',
  });
  await pool.end();
  await nc.close();

  return {
    name,
    config,
    env,
    accountId: ids.account_id,
    token,
    meterId,
    probeMeterId,
    readsMeterId,
    productId: product.id,
    drop,
  };
}

/** How a bench meter aggregates: a counter summing by default, or counting distinct values of a dimension. */
export interface BenchMeterShape {
  aggregation?: 'sum' | 'unique_count';
  uniqueBy?: string;
  dimensions?: string[];
}

/**
 * A counter meter of the account, in Postgres and in the meter registry, as the control plane writes one (a
 * unique_count meter registered for per-hour distinct sets first, as createMeter does).
 */
async function insertBenchMeter(
  pool: pg.Pool,
  kv: Awaited<ReturnType<Kvm['open']>>,
  config: Config,
  accountId: string,
  label: string,
  shape: BenchMeterShape = {},
): Promise<string> {
  const now = new Date();
  const m: MeterRecord = {
    id: newId('mtr'),
    account_id: accountId,
    type: 'counter',
    aggregation: shape.aggregation ?? 'sum',
    status: 'active',
    updated_at_ms: now.getTime(),
  };
  if (shape.dimensions?.length) m.dimensions = shape.dimensions;
  if (shape.uniqueBy) {
    const shards = await UsageShards.open(config, { quiet: true });
    try {
      await registerUniqueMeter(shards.of(accountId), config.CLICKHOUSE_DATABASE, {
        accountId,
        meterId: m.id,
        uniqueBy: shape.uniqueBy,
      });
    } finally {
      await shards.close();
    }
  }
  await pool.query(
    'INSERT INTO meters (id, account_id, name, unit, type, aggregation, status, created_at, updated_at, dimensions, unique_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10)',
    [
      m.id,
      m.account_id,
      label,
      shape.uniqueBy ? 'users' : 'requests',
      m.type,
      m.aggregation,
      m.status,
      now,
      shape.dimensions ?? [],
      shape.uniqueBy ?? null,
    ],
  );
  await putMeter(kv, m);
  return m.id;
}

/** Another meter of the world's account (the dimension read phases' meters). */
export async function addBenchMeter(world: BenchWorld, label: string, shape: BenchMeterShape): Promise<string> {
  const pool = new pg.Pool({ connectionString: world.config.DATABASE_URL, max: 1 });
  const nc = await connectNats(world.config.NATS_URL, 'bench-setup');
  try {
    return await insertBenchMeter(
      pool,
      await new Kvm(nc).open(new NatsNames(world.config.NATS_NAMESPACE).meterBucket),
      world.config,
      world.accountId,
      label,
      shape,
    );
  } finally {
    await pool.end();
    await nc.close();
  }
}

/** Another account in the world with a write token and one counter meter (the noisy-neighbour phase's second tenant). */
export async function addBenchAccount(
  world: BenchWorld,
  label: string,
): Promise<{ accountId: string; token: string; meterId: string }> {
  const { config } = world;
  const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 2 });
  const nc = await connectNats(config.NATS_URL, 'bench-setup');
  try {
    const ids = await createAccount(pool, {
      name: label,
      email: `${label}-${world.name}@example.com`,
      password: randomBytes(12).toString('hex'),
    });
    const clientId = newId('cli');
    await pool.query(
      'INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, is_public) VALUES ($1, $2, NULL, $3, true)',
      [clientId, label, ['http://127.0.0.1/cb']],
    );
    const keys = new SigningKeys(pool, config.SECRET_KEY);
    await keys.load();
    const { token } = await issueAccessToken(
      keys,
      { accountId: ids.account_id, userId: ids.user_id, clientId, scopes: ['write'] },
      { issuer: config.PUBLIC_BASE_URL, ttlSeconds: 6 * 3600 },
    );
    const meterId = await insertBenchMeter(
      pool,
      await new Kvm(nc).open(new NatsNames(config.NATS_NAMESPACE).meterBucket),
      config,
      ids.account_id,
      label,
    );
    return { accountId: ids.account_id, token, meterId };
  } finally {
    await pool.end();
    await nc.close();
  }
}
