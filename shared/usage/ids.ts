import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const PREFIX = 'use_';
const ID_CHARS = 22;
const ID_LENGTH = PREFIX.length + ID_CHARS;
const IDS_PER_POOL = 1024;
const random = Buffer.alloc(ID_CHARS * IDS_PER_POOL);
const chars = Buffer.alloc(ID_LENGTH * IDS_PER_POOL);
for (let at = 0; at < chars.length; at += ID_LENGTH) chars.write(PREFIX, at, 'latin1');
let pool = '';
let next = IDS_PER_POOL;

/**
 * Server-assigned usage record id: `use_` + 22 base62 characters, the same shape and randomness as
 * shared/ids.ts newId('use'). Batches assign thousands per millisecond, so ids are drawn from a pool: one
 * randomFillSync and one string for 1,024 ids, prefix included, each id a slice of it (no per-character
 * string building, and no concatenation that a later read of its characters would have to flatten).
 */
export function newUsageId(): string {
  if (next === IDS_PER_POOL) {
    randomFillSync(random);
    for (let id = 0; id < IDS_PER_POOL; id++) {
      const from = id * ID_CHARS;
      const to = id * ID_LENGTH + PREFIX.length;
      for (let i = 0; i < ID_CHARS; i++) chars[to + i] = ALPHABET.charCodeAt(random[from + i]! % 62);
    }
    pool = chars.toString('latin1');
    next = 0;
  }
  const at = next++ * ID_LENGTH;
  return pool.slice(at, at + ID_LENGTH);
}
