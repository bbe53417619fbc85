import type { Infra } from '../infra.js';
import { API_PROCESS_TTL_MS } from '../migrate.js';
import { AccountLimitsBook, type AccountLimits } from './account-limits.js';
import { AccountRateLimiter, ProcessCount } from './rate-limiter.js';

/**
 * Per-account limits as the api uses them: every account's limits (defaults + operator overrides, kept in
 * memory by a KV watch) and the rate limiter whose share of each limit follows the number of live api
 * processes. Started before the listener opens, stopped after it closed.
 */
export const CARD_ATTEMPTS_PER_HOUR = 20;

export class AccountProtection {
  readonly book: AccountLimitsBook;
  readonly processes: ProcessCount;
  readonly limiter: AccountRateLimiter;

  constructor(infra: Infra) {
    this.book = new AccountLimitsBook(infra.nats, infra.natsNames.limitsBucket, infra.config, infra.log);
    this.processes = new ProcessCount(infra.nats, infra.natsNames.apiProcessBucket, API_PROCESS_TTL_MS / 3, infra.log);
    this.limiter = new AccountRateLimiter(() => this.processes.share);
  }

  limits(accountId: string): AccountLimits {
    return this.book.limits(accountId);
  }

  /** Counts `records` usage records against the account's ingest rate; 429 (nothing counted) when over. */
  takeIngestRecords(accountId: string, records: number, now?: number): void {
    this.limiter.take(accountId, 'ingest', records, this.book.limits(accountId).ingest_records_per_second, 1, now);
  }

  /**
   * Counts the `records` of an admin token's request against its account's emitter ceiling (operator mode:
   * records for many customers, each of which also counts against its customer's ingest rate).
   */
  takeAttributedRecords(accountId: string, records: number): void {
    this.limiter.take(accountId, 'attributed', records, this.book.limits(accountId).attributed_records_per_second);
  }

  /**
   * One card addition attempt (each costs a processor verification, and card testers try many): at most
   * CARD_ATTEMPTS_PER_HOUR per account, declined ones included; 429 when over.
   */
  takeCardAttempt(accountId: string): void {
    this.limiter.take(accountId, 'card-attempts', 1, CARD_ATTEMPTS_PER_HOUR, 3600);
  }

  /** One request against the account's request rate; 429 when over. */
  takeRequest(accountId: string): void {
    this.limiter.take(accountId, 'requests', 1, this.book.limits(accountId).requests_per_second);
  }

  async start(): Promise<void> {
    await this.book.start();
    await this.processes.start();
  }

  async stop(): Promise<void> {
    this.limiter.stop();
    await this.processes.stop();
    await this.book.stop();
  }

  health(): { ok: boolean; detail?: string } {
    return this.book.health();
  }
}
