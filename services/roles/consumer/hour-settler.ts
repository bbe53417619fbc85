import type { Logger } from 'pino';
import type { PgPool } from '../../../shared/clients/postgres.js';
import {
  hoursOfSql,
  hourStates,
  isSettled,
  MARKS_TABLE,
  touchedSince,
  writeSettles,
  type HourState,
} from '../../../shared/usage/hour-marks.js';
import { HOUR_MS, recomputeHours, type HourKeys } from '../../../shared/usage/rollups.js';
import type { UsageShard, UsageShards } from '../../../shared/usage/shards.js';
import { UNIQUE_METERS_TABLE } from '../../../shared/usage/unique-rollups.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import { ACCOUNT_LOCK, withAccountLocks } from './account-locks.js';

/** A marked hour is recomputed once no insert has marked it for this long (a backfill's hours: once, at its end). */
export const QUIET_SECONDS = 2;
/**
 * …or, a closed hour, once its marked rows have doubled since its last recompute (and passed this many): a long
 * replay then recomputes each hour O(log) times, never once per batch — each row a bounded number of times.
 */
const GROWTH_FLOOR = 10_000;
/** Every settler looks back this far when it starts (marks a stopped process left unsettled). */
const STARTUP_LOOKBACK_SECONDS = 6 * 3600;
/** Work-list rows may land this long after the second they name (an insert's marks are written before its rows). */
const TOUCH_LAG_SECONDS = 60;
/** Meters per lock hold: inserts of the accounts wait while their hours are recomputed. */
const METERS_PER_SETTLE = 50;

/**
 * Recomputes `keys`' hours and records that every mark counted is covered (shared/usage/hour-marks.ts), holding
 * the accounts' settle locks exclusively: no insert of theirs is between its marks and its rows, so every row of
 * a counted mark is in the recompute. The hour-close sweep and the settler both come here. Returns the hours it
 * settled.
 */
export async function settleHours(
  pg: PgPool,
  shard: UsageShard,
  database: string,
  keys: readonly HourKeys[],
): Promise<number> {
  let settled = 0;
  for (let i = 0; i < keys.length; i += METERS_PER_SETTLE) {
    const chunk = keys.slice(i, i + METERS_PER_SETTLE).map((k) => ({ ...k, hours: [...k.hours] }));
    settled += await withAccountLocks(
      pg,
      ACCOUNT_LOCK.SETTLE,
      chunk.map((k) => k.accountId),
      'exclusive',
      async () => {
        // On a cluster: this replica first holds every mark and row its twins hold.
        await shard.syncReplica(MARKS_TABLE);
        await shard.syncReplica(USAGE_TABLE);
        await shard.syncReplica(UNIQUE_METERS_TABLE);
        return shard.replicas.run(async (ch) => {
          const states = (await hourStates(ch, database, hoursOfSql(chunk), shard.local)).filter((s) => !isSettled(s));
          await recomputeHours(ch, database, chunk, shard.local);
          await writeSettles(ch, database, states, Date.now(), shard.local);
          return states.length;
        });
      },
    );
  }
  return settled;
}

/** Whether a marked, unsettled hour is due for its recompute at `nowSecond`. */
export function settleDue(s: HourState & { lastSecond: number }, nowSecond: number): boolean {
  if (s.lastSecond <= nowSecond - QUIET_SECONDS) return true;
  const closed = (s.hour + 1) * HOUR_MS <= nowSecond * 1000;
  const grown = s.records - s.settledRecords;
  return closed && grown >= GROWTH_FLOOR && grown >= s.settledRecords;
}

/**
 * Settles marked hours as they become due (settleDue), per shard, from the work list (usage_hour_touches). Any
 * number of consumer processes may run one: a second settle of an hour finds it settled, or settles it again.
 */
export class HourSettler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly cursors = new Map<UsageShard, number>();
  private lastError: string | undefined;
  private failingSince: number | undefined;

  constructor(
    private readonly pg: PgPool,
    private readonly shards: UsageShards,
    private readonly database: string,
    private readonly log: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = this.settleDue()
      .then(() => {
        this.lastError = undefined;
        this.failingSince = undefined;
      })
      .catch((err) => {
        this.lastError = (err as Error).message;
        this.failingSince ??= Date.now();
        this.log.warn({ err: this.lastError }, 'hour settle failed; retrying');
      })
      .finally(() => {
        if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.intervalMs);
      });
  }

  /** One pass over every shard: the due hours settled; returns how many. */
  async settleDue(nowMs = Date.now()): Promise<number> {
    let total = 0;
    for (const shard of this.shards.shards) total += await this.settleShard(shard, Math.floor(nowMs / 1000));
    return total;
  }

  private async settleShard(shard: UsageShard, nowSecond: number): Promise<number> {
    const from = this.cursors.get(shard) ?? nowSecond - STARTUP_LOOKBACK_SECONDS;
    const touched = await shard.replicas.run((ch) => touchedSince(ch, this.database, from, shard.local));
    let next = nowSecond - TOUCH_LAG_SECONDS;
    if (touched.length === 0) {
      this.cursors.set(shard, Math.max(from, next));
      return 0;
    }
    const last = new Map(touched.map((t) => [`${t.accountId}\u0000${t.meterId}\u0000${t.hour}`, t.lastSecond]));
    const byMeter = new Map<string, HourKeys & { hours: number[] }>();
    for (const t of touched) {
      const k = `${t.accountId}\u0000${t.meterId}`;
      let e = byMeter.get(k);
      if (!e) byMeter.set(k, (e = { accountId: t.accountId, meterId: t.meterId, hours: [] }));
      e.hours.push(t.hour);
    }
    const states = await shard.replicas.run((ch) =>
      hourStates(ch, this.database, hoursOfSql([...byMeter.values()]), shard.local),
    );
    const due = new Map<string, HourKeys & { hours: number[] }>();
    for (const s of states) {
      if (isSettled(s)) continue;
      const lastSecond = last.get(`${s.accountId}\u0000${s.meterId}\u0000${s.hour}`) ?? nowSecond;
      if (!settleDue({ ...s, lastSecond }, nowSecond)) {
        next = Math.min(next, lastSecond); // found again next time
        continue;
      }
      const k = `${s.accountId}\u0000${s.meterId}`;
      let e = due.get(k);
      if (!e) due.set(k, (e = { accountId: s.accountId, meterId: s.meterId, hours: [] }));
      e.hours.push(s.hour);
    }
    const settled = due.size ? await settleHours(this.pg, shard, this.database, [...due.values()]) : 0;
    this.cursors.set(shard, Math.max(from, next));
    if (settled) this.log.debug({ hours: settled }, 'usage hours settled');
    return settled;
  }

  /** A problem once settles have failed for a while: reads stay exact (unsettled hours are read raw), only slower. */
  problem(now = Date.now()): string | undefined {
    return this.failingSince !== undefined && now - this.failingSince > 60_000 ? this.lastError : undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
