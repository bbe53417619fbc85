import { BusyError } from '../../../shared/errors.js';

/**
 * Per-account concurrency of usage reads: at most `running` of one account's reads query ClickHouse at
 * once, at most `queued` more wait their turn (first come, first served), and any beyond get 503
 * `busy` with Retry-After at once. One account's heavy dashboards then queue behind each other — never in
 * front of another account's reads, and never for long: with ClickHouse's max_execution_time a read waits
 * at most (queued / running + 1) × that.
 */
export class AccountReadGate {
  private readonly accounts = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(
    private readonly running: number,
    private readonly queued: number,
    /** Told of each read that had to wait, and of each refused (metrics). */
    private readonly observe: { queued(): void; refused(): void } = { queued() {}, refused() {} },
  ) {}

  async run<T>(accountId: string, read: () => Promise<T>): Promise<T> {
    let a = this.accounts.get(accountId);
    if (!a) this.accounts.set(accountId, (a = { running: 0, waiting: [] }));
    if (a.running >= this.running) {
      if (a.waiting.length >= this.queued) {
        this.observe.refused();
        throw new BusyError(
          `This account already has ${this.running} usage queries running and ${this.queued} waiting; retry shortly.`,
        );
      }
      this.observe.queued();
      await new Promise<void>((resolve) => a!.waiting.push(resolve));
    } else a.running++;
    try {
      return await read();
    } finally {
      const next = a.waiting.shift();
      if (next)
        next(); // the slot passes straight to the next in line
      else if (--a.running === 0) this.accounts.delete(accountId);
    }
  }

  /** Reads of the account running now (for tests and metrics). */
  runningFor(accountId: string): number {
    return this.accounts.get(accountId)?.running ?? 0;
  }
}
