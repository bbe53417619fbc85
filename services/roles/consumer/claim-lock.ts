import { createHash } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { UsageShard } from '../../../shared/usage/shards.js';
import {
  CLAIMS_TABLE,
  claimedIdentities,
  insertClaims,
  keepUnclaimed,
  rowIdentities,
} from '../../../shared/usage/claims.js';

/** First key of pg_advisory_xact_lock(key, bucket): the claim locks of usage accounts. */
const CLAIM_LOCK_KEY = 27_027;
/** Accounts hash into this many locks: two batches of different accounts rarely wait for each other. */
const BUCKETS = 4_096;

function bucketOf(accountId: string): number {
  return createHash('md5').update(accountId).digest().readUInt32LE(0) % BUCKETS;
}

/**
 * Runs `fn` — a batch's claim lookup and claim insert (shared/usage/claims.ts) — holding the claim locks of
 * `accounts`' buckets: Postgres transaction-scoped advisory locks, so every consumer process (and every
 * concurrent INSERT of one process, each on its own connection) serialises its check-and-claim of an account
 * with the others', and a process that dies mid-way releases them with its session. Taken in bucket order in one
 * statement: two batches of overlapping accounts never deadlock.
 */
export async function withClaimLocks<T>(pg: PgPool, accounts: Iterable<string>, fn: () => Promise<T>): Promise<T> {
  const buckets = [...new Set([...accounts].map(bucketOf))].sort((a, b) => a - b);
  const client = await pg.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query(
      'SELECT count(pg_advisory_xact_lock($1::int, b)) FROM (SELECT b FROM unnest($2::int[]) AS b ORDER BY b) s',
      [CLAIM_LOCK_KEY, buckets],
    );
    const out = await fn();
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * The rows of `chunks` that count (USAGE_IDENTITY=id): their identities are looked up and the new ones claimed
 * (shared/usage/claims.ts) under the accounts' claim locks — no other insert can claim them in between. The rows
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
  return withClaimLocks(pg, accounts, () =>
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
