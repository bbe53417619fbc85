import type { PgPool } from '../../../shared/clients/postgres.js';
import type { UsageShard } from '../../../shared/clients/usage-shards.js';
import { CLAIMS_TABLE, claimedIdentities, insertClaims, keepUnclaimed, rowIdentities } from './claims.js';
import { ACCOUNT_LOCK, withAccountLocks } from './account-locks.js';

/**
 * The rows of `chunks` that count (USAGE_IDENTITY=id): their identities are looked up and the new ones claimed
 * (services/domain/usage/claims.ts) under the accounts' claim locks — no other insert can claim them in between. The rows
 * are inserted by the caller after the locks: a row claimed under its own timestamp may be inserted by anyone, any
 * number of times. On a cluster the lookup runs on a replica that first fetched every claim its twins hold.
 */
export async function claimNewRows(
  pg: PgPool,
  shard: UsageShard,
  database: string,
  chunks: Uint8Array[],
): Promise<{ chunks: Uint8Array[]; dropped: number }> {
  const rowsOf = chunks.map(rowIdentities);
  const accounts = new Set<string>();
  for (const rows of rowsOf) for (const r of rows) accounts.add(r.account);
  return withAccountLocks(pg, ACCOUNT_LOCK.CLAIM, accounts, 'exclusive', () =>
    shard.replicas.run(async (ch) => {
      if (shard.local)
        await ch.command({
          query: `SYSTEM SYNC REPLICA ${database}.${CLAIMS_TABLE}${shard.local}`,
          clickhouse_settings: { receive_timeout: 20 },
        });
      const b = keepUnclaimed(chunks, rowsOf, await claimedIdentities(ch, database, rowsOf.flat(), shard.local));
      await insertClaims(ch, database, b.claims, shard.local);
      return b;
    }),
  );
}
