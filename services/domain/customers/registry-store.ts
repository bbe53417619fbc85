import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { CUSTOMER_SHARD_LOCK } from '../../../shared/customers/shards.js';

/** The customer registry's SQL (registry-writer.ts): the accounts of a registry shard, and the shard's lock. */

/** An account as the registry holds it. */
export interface RegistryRow {
  id: string;
  customer_id: string;
  external_id: string | null;
}

/** Serialises the writers of one shard until the transaction ends, so their puts reach KV in commit order. */
export async function lockRegistryShard(client: PgClient, shard: number): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, $2)', [CUSTOMER_SHARD_LOCK, shard]);
}

/** Every account of one shard (Postgres computes the shard as shared/customers/shards.ts does). */
export async function registryShardRows(db: PgClient | PgPool, shard: number): Promise<RegistryRow[]> {
  const { rows } = await db.query<RegistryRow>(
    'SELECT id, customer_id, external_id FROM accounts WHERE customer_registry_shard(id) = $1',
    [shard],
  );
  return rows;
}

/** Every account of the shards in [from, to), each with its shard (reconciliation reads a range at a time). */
export async function registryRowsOfShards(
  pg: PgPool,
  from: number,
  to: number,
): Promise<(RegistryRow & { shard: number })[]> {
  const { rows } = await pg.query<RegistryRow & { shard: number }>(
    `SELECT id, customer_id, external_id, customer_registry_shard(id) AS shard FROM accounts
      WHERE customer_registry_shard(id) >= $1 AND customer_registry_shard(id) < $2`,
    [from, to],
  );
  return rows;
}
