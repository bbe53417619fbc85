import type { PgClient } from '../../../shared/clients/postgres.js';

/**
 * Takes `lock` (pg_advisory_xact_lock or its _shared form) of `key` for every bucket, in bucket order in one
 * statement: two holders of overlapping buckets never deadlock.
 */
export async function takeAdvisoryLocks(
  client: PgClient,
  lock: 'pg_advisory_xact_lock' | 'pg_advisory_xact_lock_shared',
  key: number,
  buckets: readonly number[],
): Promise<void> {
  await client.query(`SELECT count(${lock}($1::int, b)) FROM (SELECT b FROM unnest($2::int[]) AS b ORDER BY b) s`, [
    key,
    buckets,
  ]);
}
