import type { NatsConnection } from '../../../shared/clients/nats.js';
import type { Logger } from '../../../shared/logging.js';
import { parseUsageMoved } from '../usage/usage-moved.js';

type Subscription = ReturnType<NatsConnection['subscribe']>;

/**
 * The accounts the "usage moved" signal (services/domain/usage/usage-moved.ts) named since they were last taken,
 * for the entitlement table's refresh. Core NATS delivers only while subscribed and connected, so after anything
 * that may have lost a signal — before the server confirmed the subscription, while disconnected, the first take
 * after a reconnect, a slow-consumer drop — `take()` answers "unknown": the table then reads everything.
 */
export class MovedAccounts {
  private accounts = new Set<string>();
  private sub: Subscription | undefined;
  private confirmed = false;
  /** The subscription ended with an error (e.g. not permitted): no signal will come. */
  private failed = false;
  private connected = true;
  /** A signal may have been lost since the last take. */
  private missed = true;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subject: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.sub = this.nc.subscribe(this.subject, {
      callback: (err, m) => {
        if (err) {
          // The subscription is gone (e.g. not permitted): full reads from now on, as without a signal.
          if (!this.failed)
            this.log.warn({ err }, 'usage moved subscription failed; entitlement usage is read in full');
          this.failed = true;
          return;
        }
        for (const a of parseUsageMoved(m.string())) this.accounts.add(a);
      },
    });
    // Not awaited: an api starts whatever NATS does; until the server has the subscription every pass reads all.
    this.nc.flush().then(
      () => {
        this.confirmed = true;
        this.missed = true;
      },
      (err) => this.log.warn({ err }, 'usage moved subscription not confirmed; entitlement usage is read in full'),
    );
    void this.watch();
  }

  /** Whether signals arrive now: otherwise take() answers "unknown" and the table reads everything. */
  private get listening(): boolean {
    return this.confirmed && this.connected && !this.failed;
  }

  /**
   * The accounts signalled since the previous take (the set is taken: what arrives from now on waits for the next
   * one), or undefined when some may be missing from it.
   */
  take(): Set<string> | undefined {
    const accounts = this.accounts;
    this.accounts = new Set();
    if (!this.listening || this.missed) {
      this.missed = !this.listening;
      return undefined;
    }
    return accounts;
  }

  /** A pass that took `accounts` failed to read them: the next pass reads them (with any signalled since). */
  putBack(accounts: ReadonlySet<string>): void {
    for (const a of accounts) this.accounts.add(a);
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
    this.confirmed = false;
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'staleConnection') this.connected = false;
      else if (s.type === 'reconnect') {
        this.connected = true;
        this.missed = true;
      } else if (s.type === 'slowConsumer') this.missed = true;
    }
    this.connected = false;
  }
}
