import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ID_CHARS = 22;
const IDS_PER_POOL = 1024;
const random = Buffer.alloc(ID_CHARS * IDS_PER_POOL);
const chars = Buffer.alloc(ID_CHARS * IDS_PER_POOL);
let pool = '';
let next = IDS_PER_POOL;

/**
 * Server-assigned usage record id: `use_` + 22 base62 characters, the same shape and randomness as
 * shared/ids.ts newId('use'). Batches assign thousands per millisecond, so ids are drawn from a pool: one
 * randomFillSync and one string for 1,024 ids, each id a slice of it (no per-character string building).
 */
export function newUsageId(): string {
  if (next === IDS_PER_POOL) {
    randomFillSync(random);
    for (let i = 0; i < random.length; i++) chars[i] = ALPHABET.charCodeAt(random[i]! % 62);
    pool = chars.toString('latin1');
    next = 0;
  }
  const at = next++ * ID_CHARS;
  return 'use_' + pool.slice(at, at + ID_CHARS);
}
