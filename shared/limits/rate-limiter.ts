import { hostname } from 'node:os';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';
import type { Logger } from '../logging.js';
import { RateLimitedError } from '../errors.js';

/**
 * Per-account rates enforced across every api process, without a NATS round trip per request: each process
 * runs a token bucket per (account, policy) whose rate is its share of the account's limit. The share is
 * 1 / (live api processes), re-read every few seconds from a KV bucket of heartbeats (`ProcessCount`).
 * SO_REUSEPORT spreads connections evenly over the processes, so an account's traffic splits about evenly
 * too and the sum of the shares is the account's limit. The approximation errs on the strict side: an
 * account whose traffic all lands on one process (one keep-alive connection) gets 1/N of its limit there.
 */
export interface RateDecision {
  headers: Record<string, string>;
}

interface Bucket {
  tokens: number;
  at: number;
}

const IDLE_PRUNE_MS = 60_000;
const POLICY_UNITS: Record<string, string> = {
  ingest: 'usage records',
  attributed: 'usage records for customers',
  'card-attempts': 'card additions',
};

export class AccountRateLimiter {
  /**
   * policy → account → bucket: no key string is built per call (attributed ingest takes a customer's bucket per
   * record), and the account ids, long-lived strings, keep their hash.
   */
  private readonly buckets = new Map<string, Map<string, Bucket>>();
  private readonly pruneTimer: NodeJS.Timeout;

  constructor(private readonly share: () => number = () => 1) {
    this.pruneTimer = setInterval(() => this.prune(), IDLE_PRUNE_MS);
    this.pruneTimer.unref();
  }

  /**
   * Takes `cost` units (of at most `limit` per `windowSeconds`) of `policy` for `accountId` at `limitPerSecond`, or throws RateLimitedError (429)
   * with Retry-After and the IETF RateLimit-Policy / RateLimit fields. Nothing is taken when refused. A cost
   * above one second's worth passes when the bucket is full and leaves it in debt.
   */
  take(
    accountId: string,
    policy: string,
    cost: number,
    limit: number,
    windowSeconds = 1,
    now = performance.now(),
  ): void {
    const capacity = Math.max(limit * this.share(), 1e-3);
    const rate = capacity / windowSeconds;
    let byAccount = this.buckets.get(policy);
    if (!byAccount) this.buckets.set(policy, (byAccount = new Map()));
    let b = byAccount.get(accountId);
    if (!b) byAccount.set(accountId, (b = { tokens: capacity, at: now }));
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    if (b.tokens >= Math.min(cost, capacity)) {
      b.tokens -= cost;
      return;
    }
    const wait = Math.max(1, Math.ceil((Math.min(cost, capacity) - b.tokens) / rate));
    throw new RateLimitedError(
      `Over this account's limit of ${limit} ${POLICY_UNITS[policy] ?? 'requests'} per ${windowSeconds === 1 ? 'second' : `${windowSeconds} s`}; retry after ${wait} s.`,
      {
        'Retry-After': String(wait),
        'RateLimit-Policy': `"${policy}";q=${limit};w=${windowSeconds}`,
        RateLimit: `"${policy}";r=${Math.max(0, Math.floor(b.tokens / this.share()))};t=${wait}`,
      },
    );
  }

  stop(): void {
    clearInterval(this.pruneTimer);
  }

  private prune(now = performance.now()): void {
    // A bucket idle this long has refilled (windows are at most an hour): dropping it changes nothing.
    for (const byAccount of this.buckets.values())
      for (const [k, b] of byAccount) if (now - b.at > IDLE_PRUNE_MS * 60) byAccount.delete(k);
  }
}

/**
 * How many api processes are alive: each puts a heartbeat into a KV bucket whose entries expire
 * (API_PROCESS_TTL_MS), and counts the keys. Until the first count, and when NATS can't be asked, the last
 * known count stands (1 at first: the process alone).
 */
export class ProcessCount {
  private count = 1;
  private timer: NodeJS.Timeout | undefined;
  private kv: KV | undefined;
  private readonly id = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    private readonly intervalMs: number,
    private readonly log?: Logger,
  ) {}

  get share(): number {
    return 1 / this.count;
  }

  get processes(): number {
    return this.count;
  }

  async start(): Promise<void> {
    this.kv = await new Kvm(this.nc).open(this.bucket);
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.kv?.delete(this.id).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    try {
      await this.kv!.put(this.id, String(Date.now()));
      let n = 0;
      for await (const _ of await this.kv!.keys()) n++;
      this.count = Math.max(1, n);
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, 'api process heartbeat failed; keeping the last process count');
    }
  }
}
