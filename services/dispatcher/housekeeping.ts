import type { Infra } from '../../shared/infra.js';
import type { Component } from '../role.js';
import { reconcileUsageSubscribers } from '../control/webhooks/usage-subscribers.js';
import { EVENT_ROW_DAYS } from '../control/events/retention.js';


export interface HousekeepingOptions {
  intervalMs: number;
}

/**
 * Periodic dispatcher chores: the meter.usage.recorded subscriber bucket is reconciled with Postgres (a route
 * whose sync failed is repaired here), and published events past their retention are deleted.
 */
export class DispatcherHousekeeping implements Component {
  readonly name = 'dispatcher-housekeeping';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private lastError: string | undefined;

  constructor(
    private readonly infra: Infra,
    private readonly opts: HousekeepingOptions = { intervalMs: 60_000 },
  ) {}

  async start(): Promise<void> {
    this.timer = setInterval(() => void this.run(), this.opts.intervalMs);
    this.timer.unref();
    void this.run();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.lastError ? { ok: false, detail: this.lastError } : { ok: true };
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      try {
        const repaired = await reconcileUsageSubscribers(this.infra);
        if (repaired) this.infra.log.info({ accounts: repaired }, 'webhook usage subscribers reconciled');
        await this.infra.pg.query(
          `DELETE FROM outbox_events WHERE published_at IS NOT NULL AND created_at < now() - make_interval(days => $1)`,
          [EVENT_ROW_DAYS],
        );
        this.lastError = undefined;
      } catch (err) {
        this.lastError = (err as Error).message;
        this.infra.log.warn({ err }, 'dispatcher housekeeping failed; retrying at the next interval');
      }
    })().finally(() => (this.running = null));
    return this.running;
  }
}
