import { scrypt, randomBytes, timingSafeEqual } from 'node:crypto';
import { UnavailableError } from '../errors.js';

// scrypt from Node's OpenSSL binding; parameters stored with the hash so they can be raised later.
/** OWASP's minimum for scrypt: N = 2^17, r = 8, p = 1 (128 MiB and ~0.3 s of one core per hash). */
export const DEFAULT_LOG2_N = 17;
let N = 2 ** DEFAULT_LOG2_N;
const R = 8;
const P = 1;
const KEYLEN = 32;
/** scrypt needs 128·N·r bytes; room for N up to 2^20 (the config's maximum) and for stored older hashes. */
const MAX_MEM = 1024 * 1024 * 1024 + 64 * 1024 * 1024;

/**
 * Hashing is bounded: at most MAX_CONCURRENT derivations run at once (each holds 128 MiB and a libuv
 * thread at N = 2^17), at most MAX_WAITING wait; beyond that a sign-in is refused with 503 rather than
 * letting a password spray take the process's memory and thread pool.
 */
const MAX_CONCURRENT = 2;
const MAX_WAITING = 32;
let running = 0;
const waiting: (() => void)[] = [];

/** The cost of new hashes, from config (`PASSWORD_SCRYPT_LOG2_N`); existing hashes keep their own. */
export function setPasswordCost(log2N: number): void {
  N = 2 ** log2N;
}

export function passwordCost(): number {
  return N;
}

async function withHashingSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    if (waiting.length >= MAX_WAITING)
      throw new UnavailableError('Too many sign-ins are being checked right now; try again shortly.');
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await fn();
  } finally {
    const nextInLine = waiting.shift();
    if (nextInLine)
      nextInLine(); // the slot passes straight on
    else running--;
  }
}

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return withHashingSlot(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password.normalize('NFKC'), salt, KEYLEN, { N: n, r, p, maxmem: MAX_MEM }, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const n = N;
  const key = await derive(password, salt, n, R, P);
  return `scrypt$${n}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash!, 'base64url');
  const actual = await derive(password, Buffer.from(salt!, 'base64url'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Same cost as a real check, for unknown users: the response time does not reveal which emails exist. */
let dummy: { n: number; hash: string } | undefined;
export async function burnPasswordCheck(password: string): Promise<false> {
  if (dummy?.n !== N) dummy = { n: N, hash: await hashPassword('not-a-real-password') };
  await verifyPassword(password, dummy.hash);
  return false;
}
