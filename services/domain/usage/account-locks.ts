import { createHash } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { takeAdvisoryLocks } from './account-locks-store.js';

/**
 * First keys of pg_advisory_xact_lock(key, bucket): CLAIM — over accounts, a batch's check-and-claim of record
 * identities (claim-lock.ts), always exclusive; SETTLE — over (account, meter) pairs (settleLockName), an insert's
 * marks and rows (shared) against a recompute that counts the marks (exclusive: hour-settler.ts) — per meter, so a
 * big recompute of one meter never holds up another's inserts.
 */
export const ACCOUNT_LOCK = { CLAIM: 27_027, SETTLE: 27_028 } as const;

/** The name of a meter's settle lock. */
export const settleLockName = (accountId: string, meterId: string) => `${accountId}\u0000${meterId}`;

/**
 * Names hash into this many locks per key: two batches of different accounts rarely wait for each other. SETTLE
 * takes fewer: an operator's insert holds one per customer meter it touches (thousands), all of them shared — a
 * bound on the locks a transaction holds (Postgres' lock table is max_locks_per_transaction × connections) — and a
 * settle holds its exclusively only while it counts marks.
 */
const BUCKETS: Record<number, number> = { [ACCOUNT_LOCK.CLAIM]: 4_096, [ACCOUNT_LOCK.SETTLE]: 256 };

/**
 * A name's bucket. CLAIM keeps MD5 (every consumer version must map an account to the same lock, a rolling upgrade
 * included); SETTLE, new and taken for thousands of names per operator insert, FNV-1a over the UTF-16 code units.
 */
function bucketOf(key: number, name: string, buckets: number): number {
  if (key === ACCOUNT_LOCK.CLAIM) return createHash('md5').update(name).digest().readUInt32LE(0) % buckets;
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return (h >>> 0) % buckets;
}

/**
 * Runs `fn` holding `key`'s locks of the buckets of `names` (accounts, or settleLockName pairs): Postgres transaction-scoped advisory locks, so every
 * consumer process (and every concurrent INSERT of one process, each on its own connection) serialises with the
 * others as `mode` says, and a process that dies mid-way releases them with its session. Taken in bucket order in
 * one statement: two holders of overlapping accounts never deadlock.
 */
export async function withAccountLocks<T>(
  pg: PgPool,
  key: number,
  names: Iterable<string>,
  mode: 'shared' | 'exclusive',
  fn: () => Promise<T>,
): Promise<T> {
  const count = BUCKETS[key] ?? 4_096;
  const buckets = [...new Set([...names].map((n) => bucketOf(key, n, count)))].sort((a, b) => a - b);
  if (buckets.length === 0) return fn();
  const client = await pg.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const lock = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
    await takeAdvisoryLocks(client, lock, key, buckets);
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
