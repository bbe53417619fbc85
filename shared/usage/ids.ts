import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const POOL_BYTES = 22 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * Server-assigned usage record id: `use_` + 22 base62 characters, the same shape and randomness as
 * shared/ids.ts newId('use'), drawn from a pooled random buffer because batches assign thousands per
 * millisecond and one randomBytes() call per id would dominate the hot path.
 */
export function newUsageId(): string {
  if (offset + 22 > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  let out = 'use_';
  for (let i = 0; i < 22; i++) out += ALPHABET[pool[offset + i]! % 62];
  offset += 22;
  return out;
}
