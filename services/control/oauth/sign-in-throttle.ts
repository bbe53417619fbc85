import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../../../shared/clients/nats.js';
import { UnavailableError } from '../../../shared/errors.js';

/**
 * Slows password guessing on the sign-in form, shared by every api process (NATS KV bucket, entries expire
 * SIGN_IN_FAILURE_TTL_MS after their last failure, shared/migrate.ts). Two counters per attempt:
 * - per (client address, email): after FREE_PER_PAIR failures, each further failure doubles the wait
 *   before the next attempt (1 s, 2 s, 4 s … at most MAX_WAIT_MS); a successful sign-in resets it;
 * - per client address: the same after FREE_PER_ADDRESS failures over any emails (password spraying).
 * Exponential backoff, never a hard lock, and keyed by address: the owner signing in from another address
 * is never slowed by someone else's failures.
 */
export const FREE_PER_PAIR = 5;
export const FREE_PER_ADDRESS = 20;
const MAX_WAIT_MS = 15 * 60_000;
const CAS_ATTEMPTS = 5;

interface Failures {
  /** Failures counted. */
  n: number;
  /** Time of the last one (epoch ms). */
  at: number;
}

/** The wait after `n` failures once `free` of them have been used up (`baseMs`, doubling); 0 while under. */
export function backoffMs(n: number, free: number, baseMs = 1_000): number {
  if (n < free) return 0;
  return Math.min(MAX_WAIT_MS, baseMs * 2 ** Math.min(n - free, 30));
}

export class SignInThrottle {
  /** `baseWaitMs`: the first wait (SIGN_IN_BACKOFF_BASE_SECONDS). */
  constructor(
    private readonly kv: KV,
    private readonly baseWaitMs: number,
  ) {}

  static async open(nc: NatsConnection, bucket: string, baseWaitMs: number): Promise<SignInThrottle> {
    return new SignInThrottle(await new Kvm(nc).open(bucket), baseWaitMs);
  }

  /** Seconds until this address may try this email again, or 0. NATS unreachable → 503 (fail closed). */
  async retryAfter(address: string, email: string, now = Date.now()): Promise<number> {
    const [pair, addr] = await this.guard(() =>
      Promise.all([this.read(pairKey(address, email)), this.read(addressKey(address))]),
    );
    const until = Math.max(
      pair ? pair.value.at + backoffMs(pair.value.n, FREE_PER_PAIR, this.baseWaitMs) : 0,
      addr ? addr.value.at + backoffMs(addr.value.n, FREE_PER_ADDRESS, this.baseWaitMs) : 0,
    );
    return until > now ? Math.max(1, Math.ceil((until - now) / 1000)) : 0;
  }

  async recordFailure(address: string, email: string, now = Date.now()): Promise<void> {
    await this.guard(() =>
      Promise.all([this.increment(pairKey(address, email), now), this.increment(addressKey(address), now)]),
    );
  }

  /** The right password from this address resets this (address, email) pair; the address counter stays. */
  async recordSuccess(address: string, email: string): Promise<void> {
    await this.guard(() => this.kv.delete(pairKey(address, email)));
  }

  /** Failures counted for this (address, email) pair (0 after a successful sign-in). */
  async pairFailures(address: string, email: string): Promise<number> {
    return (await this.guard(() => this.read(pairKey(address, email))))?.value.n ?? 0;
  }

  private async read(key: string): Promise<{ value: Failures; revision: number } | null> {
    const e = await this.kv.get(key);
    if (!e || e.operation !== 'PUT') return null;
    try {
      return { value: JSON.parse(e.string()) as Failures, revision: e.revision };
    } catch {
      return null;
    }
  }

  /** Compare-and-set, so failures counted at once by several processes all count. */
  private async increment(key: string, now: number): Promise<void> {
    for (let i = 0; i < CAS_ATTEMPTS; i++) {
      const current = await this.read(key);
      const next = JSON.stringify({ n: (current?.value.n ?? 0) + 1, at: now } satisfies Failures);
      try {
        if (current) await this.kv.update(key, next, current.revision);
        else await this.kv.create(key, next);
        return;
      } catch (err) {
        if (i === CAS_ATTEMPTS - 1) throw err;
      }
    }
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch {
      throw new UnavailableError('Sign-in is unavailable for a moment; try again shortly.', 2);
    }
  }
}

// Keys hash what they count: the bucket never holds an email address, and any address text fits a KV key.
const digest = (s: string) => createHash('sha256').update(s).digest('base64url');
const pairKey = (address: string, email: string) => `pair.${digest(`${address}\u0000${email.trim().toLowerCase()}`)}`;
const addressKey = (address: string) => `addr.${digest(address)}`;
