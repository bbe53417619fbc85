import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from 'pino';
import { earliestTouchedHour, HOUR_MS, markSwept, recomputeHours, sweepDueThrough, sweptThrough, touchedMeters } from '../../shared/usage/rollups.js';

/**
 * Rolls up each hour once it has closed (plus SWEEP_AFTER_MS): every (account, meter) the hour's inserts touched
 * (usage_hours_touched) is recomputed, then the hour is marked swept and readers switch from its raw rows to
 * its rollups. Records that arrive for an hour after that are recomputed by the consumer itself. Sweeping is
 * idempotent: several consumer processes may each run one; a crashed sweep is simply done again.
 */
export class RollupSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | undefined;
  private failingSince: number | undefined;

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly database: string,
    private readonly log: Logger,
    private readonly intervalMs = 2_000,
  ) {}

  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = this.sweepDue()
      .then(() => {
        this.lastError = undefined;
        this.failingSince = undefined;
      })
      .catch((err) => {
        this.lastError = (err as Error).message;
        this.failingSince ??= Date.now();
        this.log.warn({ err: this.lastError }, 'rollup sweep failed; retrying');
      })
      .finally(() => {
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.intervalMs);
      });
  }

  /** Sweeps every closed hour after the watermark, in order; returns the new watermark. */
  async sweepDue(now = Date.now()): Promise<number | undefined> {
    const due = sweepDueThrough(now);
    let swept = await sweptThrough(this.ch, this.database);
    if (swept === undefined) {
      const first = await earliestTouchedHour(this.ch, this.database);
      if (first === undefined) {
        // Nothing recorded yet: every closed hour is (trivially) rolled up.
        await markSwept(this.ch, this.database, due);
        return due;
      }
      swept = first - 1;
    }
    for (let hour = swept + 1; hour <= due && !this.stopped; hour++) {
      const meters = await touchedMeters(this.ch, this.database, hour);
      await recomputeHours(this.ch, this.database, meters.map((m) => ({ ...m, hours: [hour] })));
      await markSwept(this.ch, this.database, hour);
      swept = hour;
      if (meters.length) this.log.debug({ hour: new Date(hour * HOUR_MS).toISOString(), meters: meters.length }, 'rollup hour swept');
    }
    return swept;
  }

  /**
   * A problem only once sweeps have failed for a while: reads stay exact without them (unswept hours are read
   * raw), they just grow slower.
   */
  problem(now = Date.now()): string | undefined {
    return this.failingSince !== undefined && now - this.failingSince > 60_000 ? this.lastError : undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
