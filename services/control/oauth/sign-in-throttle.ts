import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../../../shared/clients/nats.js';
import { UnavailableError } from '../../../shared/errors.js';

/**
 * Slows password guessing on the sign-in form, shared by every api process (NATS KV bucket, entries expire
 * SIGN_IN_FAILURE_TTL_MS after their last change, shared/migrate.ts). An attempt is counted before its
 * password is checked (a success then takes it back), atomically, so parallel guesses can't slip past the
 * count. Two counters per attempt:
 * - per (client address, email): after FREE_PER_PAIR failures, each further failure doubles the wait
 *   before the next attempt (1 s, 2 s, 4 s … at most MAX_WAIT_MS); a successful sign-in resets it;
 * - per client address: the same after FREE_PER_ADDRESS failures over any emails (password spraying).
 * Exponential backoff, never a hard lock, and keyed by address: the owner signing in from another address
 * is never slowed by someone else's failures.
 */
export const FREE_PER_PAIR = 5;
export const FREE_PER_ADDRESS = 20;
const MAX_WAIT_MS = 15 * 60_000;
/** Rounds of compare-and-set an attempt may lose to concurrent ones before it gives up (503). */
const CAS_ATTEMPTS = 50;

interface Failures {
  /** Attempts counted that did not succeed (or are being checked now). */
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

  /**
   * Lets this address try this email now — the attempt counted, on both counters, before any password is
   * checked — and returns 0; or returns the seconds to wait, nothing counted. Each counter is checked and
   * incremented in one compare-and-set, so however many attempts arrive at once, on however many processes,
   * no more pass than the free ones (then one per backoff). NATS unreachable → 503 (fail closed).
   */
  async admit(address: string, email: string, now = Date.now()): Promise<number> {
    return this.guard(async () => {
      const pair = pairKey(address, email);
      const pairWait = await this.count(pair, FREE_PER_PAIR, now);
      if (pairWait > 0) return pairWait;
      const addressWait = await this.count(addressKey(address), FREE_PER_ADDRESS, now);
      if (addressWait > 0) await this.uncount(pair); // not attempted after all
      return addressWait;
    });
  }

  /**
   * The right password: the (address, email) pair starts over, and the address forgets this attempt (the
   * address counter counts failures: an office signing in all day is never slowed).
   */
  async recordSuccess(address: string, email: string): Promise<void> {
    await this.guard(async () => {
      await this.kv.delete(pairKey(address, email));
      await this.uncount(addressKey(address));
    });
  }

  /** Attempts counted for this (address, email) pair that did not succeed (0 after a successful sign-in). */
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

  /** Counts one attempt unless the counter says wait: the seconds to wait (nothing counted), else 0. */
  private async count(key: string, free: number, now: number): Promise<number> {
    return this.compareAndSet(key, (current) => {
      const backoff = current ? backoffMs(current.n, free, this.baseWaitMs) : 0;
      // Under the free attempts there is no wait at all (a concurrent attempt may have written a later `at`).
      const until = backoff > 0 ? current!.at + backoff : 0;
      if (until > now) return { wait: Math.max(1, Math.ceil((until - now) / 1000)) };
      return { next: { n: (current?.n ?? 0) + 1, at: Math.max(now, current?.at ?? 0) } };
    });
  }

  /** Takes back one counted attempt (it turned out not to be a failure). */
  private async uncount(key: string): Promise<void> {
    await this.compareAndSet(key, (current) =>
      current && current.n > 0 ? { next: { n: current.n - 1, at: current.at } } : { wait: 0 },
    );
  }

  /**
   * Reads the counter, decides, and writes the decision only if nobody wrote in between (else reads again):
   * concurrent attempts on any process are serialised by the KV revision.
   */
  private async compareAndSet(
    key: string,
    decide: (current: Failures | undefined) => { next: Failures } | { wait: number },
  ): Promise<number> {
    for (let i = 0; ; i++) {
      const current = await this.read(key);
      const decision = decide(current?.value);
      if ('wait' in decision) return decision.wait;
      const next = JSON.stringify(decision.next);
      try {
        if (current) await this.kv.update(key, next, current.revision);
        else await this.kv.create(key, next);
        return 0;
      } catch (err) {
        if (i === CAS_ATTEMPTS - 1) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * 5)); // spread the next round of a crowd
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
