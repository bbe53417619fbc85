import type { Logger } from 'pino';
import type { PgPool } from '../../../shared/clients/postgres.js';
import {
  earliestTouchedHour,
  HOUR_MS,
  markSwept,
  sweepDueThrough,
  sweptThrough,
  touchedMeters,
  TOUCHED_TABLE,
} from './rollups-store.js';
import type { UsageShards } from '../../../shared/clients/usage-shards.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import { settleHours } from './hour-settler.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { oldestPartialDay } from './partials.js';
import { dropOldPartials } from './partials-store.js';

/**
 * Rolls up each hour once it has closed (plus SWEEP_AFTER_MS): every (account, meter) the hour's inserts touched
 * (usage_hours_touched) is recomputed, then the hour is marked swept and readers switch from its raw rows to
 * its rollups (an hour still marked by inserts after that is read raw until the settler recomputes it:
 * ./hour-settler.ts; the sweep settles what it recomputes, the same way). Sweeping is
 * idempotent: several consumer processes may each run one; a crashed sweep is simply done again.
 * On a ClickHouse cluster each shard rolls up its own accounts (on a replica that first caught up with its
 * twin), and the hour is marked swept — in a table replicated to every node — only once every shard did.
 */
export class RollupSweeper {
  private readonly task: PeriodicTask;
  private stopped = false;
  /** The oldest partials' day kept by the last drop (./partials.ts): dropped again when it moves. */
  private partialsKeptFrom = 0;

  constructor(
    private readonly pg: PgPool,
    private readonly shards: UsageShards,
    private readonly database: string,
    private readonly log: Logger,
    intervalMs = 2_000,
  ) {
    this.task = new PeriodicTask({
      name: 'rollup sweep',
      everyMs: intervalMs,
      gap: true, // a long pass is followed by a pause, as before: never back to back
      log,
      run: () => this.sweepDue(),
      failed: (err) => log.warn({ err: (err as Error).message }, 'rollup sweep failed; retrying'),
    });
  }

  start(): void {
    void this.task.start();
  }

  /** Sweeps every closed hour after the watermark, in order; returns the new watermark. */
  async sweepDue(now = Date.now()): Promise<number | undefined> {
    const due = sweepDueThrough(now);
    const { shards } = this.shards;
    const db = this.database;
    const anyNode = shards[0]!.replicas;
    let swept = await anyNode.run((ch) => sweptThrough(ch, db));
    if (swept === undefined) {
      const firsts = await Promise.all(shards.map((s) => s.replicas.run((ch) => earliestTouchedHour(ch, db, s.local))));
      const known = firsts.filter((h): h is number => h !== undefined);
      if (known.length === 0) {
        // Nothing recorded yet: every closed hour is (trivially) rolled up.
        await anyNode.run((ch) => markSwept(ch, db, due));
        return due;
      }
      swept = Math.min(...known) - 1;
    }
    for (let hour = swept + 1; hour <= due && !this.stopped; hour++) {
      let meters = 0;
      for (const s of shards) {
        await s.syncReplica(USAGE_TABLE);
        await s.syncReplica(TOUCHED_TABLE);
        const touched = await s.replicas.run((ch) => touchedMeters(ch, db, hour, s.local));
        await settleHours(
          this.pg,
          s,
          db,
          touched.map((m) => ({ ...m, hours: [hour] })),
        );
        meters += touched.length;
      }
      await anyNode.run((ch) => markSwept(ch, db, hour));
      swept = hour;
      if (meters) this.log.debug({ hour: new Date(hour * HOUR_MS).toISOString(), meters }, 'rollup hour swept');
    }
    const keepFrom = oldestPartialDay(now);
    if (keepFrom !== this.partialsKeptFrom) {
      for (const s of shards) await s.replicas.run((ch) => dropOldPartials(ch, db, keepFrom, s.local));
      this.partialsKeptFrom = keepFrom;
    }
    return swept;
  }

  /**
   * A problem only once sweeps have failed for a while: reads stay exact without them (unswept hours are read
   * raw), they just grow slower.
   */
  problem(now = Date.now()): string | undefined {
    return this.task.problem(60_000, now);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task.stop();
  }
}
