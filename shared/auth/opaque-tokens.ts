import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Opaque secrets handed to clients and browsers (authorization codes, refresh tokens, client
 * secrets, session ids): 256 random bits, base64url. Only their SHA-256 is stored — they carry full
 * entropy, so a fast hash is enough and a database leak yields nothing presentable.
 */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function matchesHash(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashOpaqueToken(token), 'utf8');
  const b = Buffer.from(storedHash, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
