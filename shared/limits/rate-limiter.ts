import { RateLimitedError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { BucketShape, LeaseResult, RateLeases } from './rate-leases.js';

/**
 * Per-account rates, the same across every api process (docs/limits.md, "Limits across processes"). The
 * account's token bucket lives in NATS KV (shared/limits/rate-leases.ts); each process leases tokens from it
 * ahead of need and spends them with no I/O, so the usual request costs a subtraction. A process that runs
 * short leases again (requests wait for that one round trip; concurrent ones share it). Whatever the number of
 * processes and however connections land on them, one connection may use the account's whole limit, and all
 * processes together admit at most the limit plus one window's burst, plus what they held leased ahead when the
 * interval began: every token spent was taken out of the one shared bucket. Tokens a process leased and left
 * unspent are dropped, never given back (that cost two more KV requests per account per burst; in operator mode
 * per customer): beyond a twentieth of the limit after a second idle, the rest after 30 s (DROP_IDLE_MS).
 *
 * When NATS can't be asked, a process falls back to a bucket of its own holding its share of the limit
 * (1 / live api processes) until it can again: strict when NATS is gone for every process. A merely slow
 * lease is waited for (awaitLease): one process on its own while the others lease would add its share.
 */

/** What a response says about one policy in its `RateLimit-Policy` and `RateLimit` fields (IETF draft). */
export interface RateLimitStatus {
  /** `"ingest";q=20000;w=1` */
  readonly policyHeader: string;
  /** `"ingest";r=19900;t=1`: what this process knows is left, and seconds until the bucket is full again. */
  limitHeader(): string;
}

/** Lease ahead of need: at least this part of a window, to spare the round trips of a light caller… */
const MIN_LEASE_AHEAD = 0.05;
/** …and about this long of the caller's recent rate on this process, up to a quarter of the window. */
const LEASE_AHEAD_MS = 250;
const MAX_LEASE_AHEAD = 0.25;
/** A caller's recent rate is measured over about this long. */
const RATE_HALF_LIFE_MS = 1_000;
/** 0.5 ** (ms / RATE_HALF_LIFE_MS) is Math.exp(-ms * DECAY_PER_MS): `**` with a fractional exponent costs ~5× exp. */
const DECAY_PER_MS = Math.LN2 / RATE_HALF_LIFE_MS;
/**
 * Unspent tokens beyond the least lease ahead (MIN_LEASE_AHEAD of the limit) are dropped after this long without a
 * request; those up to it after HOLD_IDLE_MS. A customer sending a record every few seconds (or in bursts a few
 * seconds apart) would otherwise pay a KV write for nearly every record. Held tokens left the shared bucket
 * already, so holding them takes nothing from anyone's future; docs/limits.md counts them in the burst bound.
 */
const DROP_IDLE_MS = 1_000;
const HOLD_IDLE_MS = 30_000;
const SWEEP_MS = 500;
/** A bucket idle this long has refilled (windows are at most an hour): forgotten. */
const FORGET_IDLE_MS = 3_600_000;
/**
 * No lease answer this long and the connection to NATS down → the process's own share for FALLBACK_MS. A slow
 * answer over a live connection (a loaded machine) is waited for, up to MAX_LEASE_WAIT_MS: falling back then
 * would admit this process's share on top of what the others still take from the shared bucket.
 */
const LEASE_TIMEOUT_MS = 2_000;
const MAX_LEASE_WAIT_MS = 10_000;
const FALLBACK_MS = 10_000;
const POLICY_UNITS: Record<string, string> = {
  ingest: 'usage records',
  attributed: 'usage records for customers',
  'card-attempts': 'card additions',
};

interface Waiter {
  cost: number;
  resolve: (s: RateLimitStatus) => void;
  reject: (e: Error) => void;
}

/**
 * One (policy, account) as this process holds it: leased tokens, its view of the shared bucket, waiters. The
 * fields an operator's batch reads for each of its customers come first (V8 lays them out in this order): a
 * batch's hundred customers are a hundred buckets among thousands, each a cache miss or two.
 */
class LocalBucket implements RateLimitStatus {
  readonly accountId: string;
  /** Forgotten by the sweep (idle past FORGET_IDLE_MS): a slot still naming it must not use it. */
  forgotten = false;
  /** The takeEach this bucket was last counted in, and its units there. */
  batch = 0;
  batchCost = 0;
  limit = 0;
  windowSeconds = 1;
  /** Leased and not yet spent. */
  tokens = 0;
  lastUse = 0;
  /** Decaying sum of what was spent here (≈ units per RATE_HALF_LIFE_MS / ln 2). */
  recent = 0;
  waiters: Waiter[] = [];
  /** The process's own bucket while NATS can't be asked. */
  fallback: { tokens: number; at: number } | undefined;
  leasing = false;
  readonly policy: string;
  policyHeader = '';
  shape: BucketShape = { capacity: 0, perMs: 0 };
  /** The shared bucket as the last lease left it. */
  shared: { left: number; at: number } | undefined;
  /** The shared bucket's KV key. */
  readonly key: string;

  constructor(policy: string, accountId: string) {
    this.accountId = accountId;
    this.policy = policy;
    this.key = `${policy}.${accountId}`;
  }

  setLimit(limit: number, windowSeconds: number): void {
    if (limit === this.limit && windowSeconds === this.windowSeconds) return;
    // A lowered limit holds at once (the operator's `accounts limits`): tokens leased under the old one beyond what
    // the new one would lease ahead are dropped, not spent. They left the shared bucket, which refills within a
    // window at the new rate: only ever fewer admitted meanwhile.
    if (limit < this.limit) this.tokens = Math.min(this.tokens, Math.ceil(limit * MAX_LEASE_AHEAD));
    this.limit = limit;
    this.windowSeconds = windowSeconds;
    this.shape = { capacity: limit, perMs: limit / (windowSeconds * 1000) };
    this.policyHeader = `"${this.policy}";q=${limit};w=${windowSeconds}`;
  }

  /** Upper bound of what the shared bucket holds now (others' spending since the last lease is unknown). */
  sharedEstimate(now = Date.now()): number | undefined {
    if (!this.shared) return undefined;
    return Math.min(this.shape.capacity, this.shared.left + Math.max(0, now - this.shared.at) * this.shape.perMs);
  }

  remaining(): number {
    const shared = this.fallback ? this.fallback.tokens : (this.sharedEstimate() ?? this.shape.capacity);
    return Math.max(0, Math.min(this.shape.capacity, Math.floor(this.tokens + shared)));
  }

  limitHeader(): string {
    const left = this.remaining();
    const full = Math.ceil((this.shape.capacity - left) / (this.shape.perMs * 1000));
    return `"${this.policy}";r=${left};t=${Math.max(0, full)}`;
  }

  spend(cost: number, now: number): void {
    this.tokens -= cost;
    this.recent = this.recent * Math.exp((this.lastUse - now) * DECAY_PER_MS) + cost;
    this.lastUse = now;
  }

  /** Tokens kept once idle for DROP_IDLE_MS: the least lease ahead (none for hourly policies). */
  held(): number {
    return this.windowSeconds === 1 ? Math.floor(this.shape.capacity * MIN_LEASE_AHEAD) : 0;
  }

  /** How much to lease beyond what is needed now. */
  ahead(): number {
    if (this.windowSeconds !== 1) return 0; // hourly attempts: exactly what is asked, nothing left unspent
    const perMs = this.recent / (RATE_HALF_LIFE_MS / Math.LN2);
    const c = this.shape.capacity;
    return Math.ceil(Math.min(c * MAX_LEASE_AHEAD, Math.max(c * MIN_LEASE_AHEAD, perMs * LEASE_AHEAD_MS)));
  }

  refusal(cost: number, available: number): RateLimitedError {
    const need = Math.min(cost, this.shape.capacity) - available;
    const wait = Math.max(1, Math.ceil(need / (this.shape.perMs * 1000)));
    const w = this.windowSeconds;
    return new RateLimitedError(
      `Over this account's limit of ${this.limit} ${POLICY_UNITS[this.policy] ?? 'requests'} per ${w === 1 ? 'second' : `${w} s`}; retry after ${wait} s.`,
      {
        'Retry-After': String(wait),
        'RateLimit-Policy': this.policyHeader,
        RateLimit: `"${this.policy}";r=${Math.max(0, Math.floor(available))};t=${wait}`,
      },
    );
  }
}

export class AccountRateLimiter {
  /** policy → account → bucket: a take looks up two strings it has, and builds none. */
  private readonly buckets = new Map<string, Map<string, LocalBucket>>();
  /** policy → customer registry slot → its bucket (takeEach's `slots`): the same buckets as `buckets`. */
  private readonly slotBuckets = new Map<string, (LocalBucket | undefined)[]>();
  private readonly sweeper: NodeJS.Timeout;
  private fallbackUntil = 0;
  /** takeEach calls so far: a bucket whose `batch` is the current one was counted in it already. */
  private batches = 0;

  /**
   * `leases`: the shared buckets (undefined: this process alone, its own buckets); `share`: this process's part
   * of a limit when it must enforce alone (NATS unreachable).
   */
  constructor(
    private readonly leases: RateLeases | undefined,
    private readonly share: () => number = () => 1,
    private readonly log?: Logger,
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Takes `cost` units of `policy` (at most `limit` per `windowSeconds`) for `accountId`: the status for the
   * response's RateLimit fields — at once when this process holds the tokens, else once it leased them — or
   * RateLimitedError (429, Retry-After and the RateLimit fields), nothing taken. A cost above the whole limit
   * passes only when the account's bucket is full, and leaves it in debt.
   */
  take(
    accountId: string,
    policy: string,
    cost: number,
    limit: number,
    windowSeconds = 1,
  ): RateLimitStatus | Promise<RateLimitStatus> {
    const b = this.bucket(policy, accountId);
    b.setLimit(limit, windowSeconds);
    return this.takeFrom(b, cost, performance.now());
  }

  /**
   * `take` for many accounts at once (an operator's batch: each customer's records against its own rate):
   * `accounts` holds the account of each unit (each accepted record, in order; an account may repeat), `limitOf`
   * each account's limit per second. Answers the accounts refused — at once when this process holds every token,
   * else with one promise once the leases needed are answered. A batch's units are counted on the buckets
   * themselves (one lookup per record, no map per batch): a hundred customers' records cost a hundred lookups.
   * `slots` (beside `accounts`: each record's customer registry slot, -1 for none) finds a customer's bucket in
   * an array instead of the map — the map's probe is a random memory access per record among many customers;
   * the bucket a slot names is used only while it is that same account's and not forgotten.
   */
  takeEach(
    policy: string,
    accounts: readonly string[],
    limitOf: (accountId: string) => number,
    slots?: ArrayLike<number>,
  ): Map<string, RateLimitedError> | Promise<Map<string, RateLimitedError>> {
    const byAccount = this.accountsOf(policy);
    const bySlot = slots ? this.slotsOf(policy) : undefined;
    const batch = ++this.batches;
    const touched: LocalBucket[] = [];
    for (let i = 0; i < accounts.length; i++) {
      const accountId = accounts[i]!;
      const slot = bySlot ? slots![i]! : -1;
      let b = slot >= 0 ? bySlot![slot] : undefined;
      if (b === undefined || b.forgotten || b.accountId !== accountId) {
        b = byAccount.get(accountId);
        if (!b) byAccount.set(accountId, (b = new LocalBucket(policy, accountId)));
        if (slot >= 0) {
          while (bySlot!.length <= slot) bySlot!.push(undefined);
          bySlot![slot] = b;
        }
      }
      if (b.batch !== batch) {
        b.batch = batch;
        b.batchCost = 0;
        touched.push(b);
      }
      b.batchCost++;
    }
    const refused = new Map<string, RateLimitedError>();
    let pending: Promise<void>[] | undefined;
    const now = performance.now();
    for (const b of touched) {
      b.setLimit(limitOf(b.accountId), 1);
      try {
        const taken = this.takeFrom(b, b.batchCost, now);
        if (taken instanceof Promise)
          (pending ??= []).push(
            taken.then(
              () => undefined,
              (err: unknown) => refuse(refused, b.accountId, err),
            ),
          );
      } catch (err) {
        refuse(refused, b.accountId, err);
      }
    }
    return pending ? Promise.all(pending).then(() => refused) : refused;
  }

  /** Stops the sweep. Unspent tokens are dropped, as when idle: the shared buckets refill within a window. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** A policy's buckets by customer registry slot (takeEach's `slots`); holes and stale entries are checked. */
  private slotsOf(policy: string): (LocalBucket | undefined)[] {
    let bySlot = this.slotBuckets.get(policy);
    if (!bySlot) this.slotBuckets.set(policy, (bySlot = []));
    return bySlot;
  }

  private accountsOf(policy: string): Map<string, LocalBucket> {
    let byAccount = this.buckets.get(policy);
    if (!byAccount) this.buckets.set(policy, (byAccount = new Map()));
    return byAccount;
  }

  private bucket(policy: string, accountId: string): LocalBucket {
    const byAccount = this.accountsOf(policy);
    let b = byAccount.get(accountId);
    if (!b) byAccount.set(accountId, (b = new LocalBucket(policy, accountId)));
    return b;
  }

  private takeFrom(b: LocalBucket, cost: number, now: number): RateLimitStatus | Promise<RateLimitStatus> {
    if (!this.leases || now < this.fallbackUntil) return this.takeAlone(b, cost, now);
    if (b.fallback) b.fallback = undefined;
    if (b.waiters.length === 0 && b.tokens >= cost) {
      b.spend(cost, now);
      return b;
    }
    return new Promise<RateLimitStatus>((resolve, reject) => {
      b.waiters.push({ cost, resolve, reject });
      this.pump(b);
    });
  }

  /** Serves the waiters in order: from leased tokens, else by one lease at a time. */
  private pump(b: LocalBucket): void {
    if (b.leasing) return;
    const now = performance.now();
    while (b.waiters.length) {
      const head = b.waiters[0]!;
      if (b.tokens >= head.cost) {
        b.waiters.shift();
        b.spend(head.cost, now);
        head.resolve(b);
        continue;
      }
      const need = Math.min(head.cost, b.shape.capacity) - b.tokens;
      const estimate = b.sharedEstimate();
      if (estimate !== undefined && estimate < need) {
        // Even if nobody else spent anything since the last lease, the shared bucket can't have enough.
        b.waiters.shift();
        head.reject(b.refusal(head.cost, b.tokens + estimate));
        continue;
      }
      break;
    }
    if (!b.waiters.length || !this.leases) return;
    const head = b.waiters[0]!;
    let queued = 0;
    for (let i = 1; i < b.waiters.length; i++) queued += b.waiters[i]!.cost;
    b.leasing = true;
    const leases = this.leases;
    awaitLease(
      leases.lease(b.key, b.shape, {
        need: Math.min(head.cost, b.shape.capacity) - b.tokens,
        take: head.cost - b.tokens,
        extra: b.ahead() + queued,
      }),
      () => leases.reachable !== false,
    ).then(
      (r) => this.leased(b, r),
      (err) => this.leaseFailed(b, err),
    );
  }

  private leased(b: LocalBucket, r: LeaseResult): void {
    b.leasing = false;
    b.tokens += r.granted;
    b.shared = { left: r.left, at: r.at };
    const head = b.waiters[0];
    if (head && r.granted === 0) {
      b.waiters.shift();
      head.reject(b.refusal(head.cost, b.tokens + r.left));
    }
    this.pump(b);
  }

  private leaseFailed(b: LocalBucket, err: unknown): void {
    b.leasing = false;
    if (performance.now() >= this.fallbackUntil)
      this.log?.warn(
        { err: (err as Error).message },
        'rate limits: the shared buckets can not be reached; enforcing this process’s share alone',
      );
    this.fallbackUntil = performance.now() + FALLBACK_MS;
    const now = performance.now();
    for (const w of b.waiters.splice(0)) {
      try {
        w.resolve(this.takeAlone(b, w.cost, now));
      } catch (refused) {
        w.reject(refused as Error);
      }
    }
  }

  /** This process's own bucket holding its share of the limit (no NATS). */
  private takeAlone(b: LocalBucket, cost: number, now: number): RateLimitStatus {
    const capacity = Math.max(b.shape.capacity * this.share(), 1e-3);
    const perMs = b.shape.perMs * this.share();
    const f = (b.fallback ??= { tokens: capacity, at: now });
    f.tokens = Math.min(capacity, f.tokens + (now - f.at) * perMs);
    f.at = now;
    if (f.tokens >= Math.min(cost, capacity)) {
      f.tokens -= cost;
      b.lastUse = now;
      return b;
    }
    throw b.refusal(cost, f.tokens);
  }

  private sweep(now = performance.now()): void {
    let forgot = false;
    for (const byAccount of this.buckets.values())
      for (const [accountId, b] of byAccount) {
        if (b.leasing || b.waiters.length) continue;
        const idle = now - b.lastUse;
        // Unspent leased tokens go nowhere: the shared bucket already counts them as spent, so this process and
        // the others together only ever admit fewer.
        if (idle > DROP_IDLE_MS && b.tokens > 0) b.tokens = Math.min(b.tokens, idle > HOLD_IDLE_MS ? 0 : b.held());
        if (idle > FORGET_IDLE_MS) {
          b.forgotten = true;
          forgot = true;
          byAccount.delete(accountId);
          this.leases?.forget(b.key);
        }
      }
    // A slot's forgotten bucket is never used again (takeEach checks): let it go.
    if (forgot)
      for (const bySlot of this.slotBuckets.values())
        for (let s = 0; s < bySlot.length; s++) if (bySlot[s]?.forgotten) bySlot[s] = undefined;
  }
}

function refuse(refused: Map<string, RateLimitedError>, accountId: string, err: unknown): void {
  if (!(err instanceof RateLimitedError)) throw err;
  refused.set(accountId, err);
}

/** The lease's answer, or a rejection once NATS is unreachable past LEASE_TIMEOUT_MS or silent for MAX_LEASE_WAIT_MS. */
function awaitLease<T>(p: Promise<T>, reachable: () => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const started = performance.now();
    const timer = setInterval(() => {
      const waited = performance.now() - started;
      if (reachable() && waited < MAX_LEASE_WAIT_MS) return;
      clearInterval(timer);
      reject(new Error(`no answer within ${Math.round(waited)} ms${reachable() ? '' : ' (NATS disconnected)'}`));
    }, LEASE_TIMEOUT_MS);
    p.then(
      (v) => {
        clearInterval(timer);
        resolve(v);
      },
      (e) => {
        clearInterval(timer);
        reject(e);
      },
    );
  });
}
