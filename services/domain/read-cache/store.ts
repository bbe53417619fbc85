import type { PgPool } from '../../../shared/clients/postgres.js';
import type { ReadVersions } from '../../../shared/read-cache.js';

/** Every kind's version (bumped by triggers in the transaction of each change: migration 745). */
export async function readCacheVersions(pool: PgPool): Promise<ReadVersions> {
  const { rows } = await pool.query<{ kind: string; version: string }>({
    name: 'read-cache-versions',
    text: 'SELECT kind, version::text AS version FROM read_cache_versions',
  });
  return new Map(rows.map((r) => [r.kind, r.version]));
}
