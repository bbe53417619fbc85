/**
 * `meterline migrate`: every schema (shared/migrate.ts: Postgres, ClickHouse, NATS), then the data steps that
 * need the domain (the usage storage's unique-count backfill). It lives in services/, not shared/, because
 * shared/ knows nothing of the domain (test/unit/layers.test.ts).
 */
import pg from 'pg';
import type { Config } from '../shared/config.js';
import { connectNats, NatsNames } from '../shared/clients/nats.js';
import { ensureNatsTopology, migrateClickhouse, migratePostgres } from '../shared/migrate.js';
import { UsageShards } from '../shared/clients/usage-shards.js';
import { backfillUniqueMeters, uniqueCountMeters } from './domain/usage/unique-backfill.js';

export interface MigrationReport {
  postgres: string[];
  clickhouse: string[];
  nats: string[];
  /** unique_count meters whose distinct sets were backfilled (domain/usage/unique-backfill.ts). */
  uniqueBackfill: string[];
}

/**
 * Data step after the schema: distinct sets for unique_count meters older than them (needs Postgres and
 * ClickHouse migrated). Opens the shard clients only when there is a unique_count meter to look at.
 */
async function backfillUniqueCounts(config: Config): Promise<string[]> {
  const client = new pg.Client({ connectionString: config.DATABASE_URL });
  await client.connect();
  const meters = await uniqueCountMeters(client).finally(() => client.end());
  if (meters.length === 0) return [];
  const shards = await UsageShards.open(config, { quiet: true });
  try {
    return await backfillUniqueMeters(shards, config.CLICKHOUSE_DATABASE, meters);
  } finally {
    await shards.close();
  }
}

export async function migrateAll(config: Config): Promise<MigrationReport> {
  const postgres = await migratePostgres(config.DATABASE_URL);
  const clickhouse = await migrateClickhouse(
    config.CLICKHOUSE_URL,
    config.CLICKHOUSE_DATABASE,
    config.CLICKHOUSE_CLUSTER,
  );
  const uniqueBackfill = await backfillUniqueCounts(config);
  const nc = await connectNats(config.NATS_URL, 'meterline-migrate');
  try {
    const nats = await ensureNatsTopology(
      nc,
      new NatsNames(config.NATS_NAMESPACE),
      config.USAGE_STREAM_MAX_BYTES,
      config.NATS_STREAM_REPLICAS,
    );
    return { postgres, clickhouse, nats, uniqueBackfill };
  } finally {
    await nc.close();
  }
}
