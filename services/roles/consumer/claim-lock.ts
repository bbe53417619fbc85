import { createHash } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';

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
