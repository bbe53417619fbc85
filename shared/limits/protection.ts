import type { RateLimitedError } from '../errors.js';
import type { Infra } from '../infra.js';
import { API_PROCESS_TTL_MS } from '../migrate.js';
import { AccountLimitsBook, type AccountLimits } from './account-limits.js';
import { ProcessCount } from './process-count.js';
import { RateLeases } from './rate-leases.js';
import { AccountRateLimiter, type RateLimitStatus } from './rate-limiter.js';

/**
 * Per-account limits as the api uses them: every account's limits (defaults + operator overrides, kept in
 * memory by a KV watch) and the rate limiter, whose buckets are shared by every api process (NATS KV leases,
 * shared/limits/rate-limiter.ts). Started before the listener opens, stopped after it closed.
 *
 * Each `take…` returns the status for the response's RateLimit fields — at once when this process holds the
 * tokens, or a promise while it leases more — or throws RateLimitedError (429).
 */
export const CARD_ATTEMPTS_PER_HOUR = 20;

export type RateTake = RateLimitStatus | Promise<RateLimitStatus>;

export class AccountProtection {
  readonly book: AccountLimitsBook;
  readonly processes: ProcessCount;
  private rates: AccountRateLimiter | undefined;

  constructor(private readonly infra: Infra) {
    this.book = new AccountLimitsBook(infra.nats, infra.natsNames.limitsBucket, infra.config, infra.log);
    this.processes = new ProcessCount(infra.nats, infra.natsNames.apiProcessBucket, API_PROCESS_TTL_MS / 3, infra.log);
  }

  private get limiter(): AccountRateLimiter {
    if (!this.rates) throw new Error('AccountProtection used before start()');
    return this.rates;
  }

  limits(accountId: string): AccountLimits {
    return this.book.limits(accountId);
  }

  /** Counts `records` usage records against the account's ingest rate; 429 (nothing counted) when over. */
  takeIngestRecords(accountId: string, records: number): RateTake {
    return this.limiter.take(accountId, 'ingest', records, this.ingestLimit(accountId));
  }

  /**
   * takeIngestRecords for many accounts at once (an operator's batch: the account of each of its records): the
   * accounts refused, at once or with one promise when some leased.
   */
  takeIngestRecordsEach(
    records: readonly string[],
    slots?: ArrayLike<number>,
  ): Map<string, RateLimitedError> | Promise<Map<string, RateLimitedError>> {
    return this.limiter.takeEach('ingest', records, this.ingestLimit, slots);
  }

  /** An account's ingest limit per second (one closure, not one per batch). */
  private readonly ingestLimit = (accountId: string): number => this.book.limits(accountId).ingest_records_per_second;

  /**
   * Counts the `records` of an admin token's request against its account's emitter ceiling (operator mode:
   * records for many customers, each customer's also counted against that customer's ingest rate).
   */
  takeAttributedRecords(accountId: string, records: number): RateTake {
    return this.limiter.take(
      accountId,
      'attributed',
      records,
      this.book.limits(accountId).attributed_records_per_second,
    );
  }

  /**
   * One card addition attempt (each costs a processor verification, and card testers try many): at most
   * CARD_ATTEMPTS_PER_HOUR per account, declined ones included; 429 when over.
   */
  takeCardAttempt(accountId: string): RateTake {
    return this.limiter.take(accountId, 'card-attempts', 1, CARD_ATTEMPTS_PER_HOUR, 3600);
  }

  /** One request against the account's request rate; 429 when over. */
  takeRequest(accountId: string): RateTake {
    return this.limiter.take(accountId, 'requests', 1, this.book.limits(accountId).requests_per_second);
  }

  async start(): Promise<void> {
    await this.book.start();
    await this.processes.start();
    const leases = await RateLeases.open(this.infra.nats, this.infra.natsNames.rateBucket);
    this.rates = new AccountRateLimiter(leases, () => this.processes.share, this.infra.log);
  }

  async stop(): Promise<void> {
    await this.rates?.stop();
    await this.processes.stop();
    await this.book.stop();
  }

  health(): { ok: boolean; detail?: string } {
    return this.book.health();
  }
}
