import type { Logger } from 'pino';
import type { PgPool } from '../../../shared/clients/postgres.js';
import {
  hoursOfSql,
  isMarkedPerMinute,
  isMarkedPerSecond,
  isMinuteSettled,
  isSecondSettled,
  isSettled,
  MARKS_TABLE,
  sliceOf,
  WHOLE_HOUR,
  type HourState,
  type Settle,
} from './hour-marks.js';
import { hourStates, touchedSince, touchedSinceSql, writeSettles } from './hour-marks-store.js';
import {
  HOUR_MS,
  MINUTE_ROLLUP_TABLE,
  recomputeHours,
  recomputeMinutes,
  recomputeSeconds,
  ROLLUP_TABLE,
  SECOND_ROLLUP_TABLE,
  type HourKeys,
} from './rollups-store.js';
import type { UsageShard, UsageShards } from '../../../shared/clients/usage-shards.js';
import { UNIQUE_METERS_TABLE, UNIQUE_ROLLUP_TABLE } from './unique-rollups-store.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import { ACCOUNT_LOCK, settleLockName, withAccountLocks } from './account-locks.js';
import { PeriodicTask } from '../../../shared/periodic.js';

/** A marked hour (or minute) is recomputed once no insert has marked it for this long (a backfill's: at its end). */
export const QUIET_SECONDS = 2;
/**
 * A second of a minute still busy is recomputed once no insert has marked it for this long (whole seconds of the
 * work list's clock: 1 means the second before last): live records reach the consumer within a second or so.
 */
export const SECOND_QUIET_SECONDS = 1;
/**
 * …or, a closed hour, once its marked rows have doubled since its last recompute (and passed this many): a long
 * replay then recomputes each hour O(log) times, never once per batch — each row a bounded number of times.
 */
const GROWTH_FLOOR = 10_000;
/**
 * An open hour's minutes are recomputed once it holds this many records: below, reading it raw costs a few ms,
 * and an operator's thousands of small customers cost the settler nothing until their hours close.
 */
export const MINUTE_SETTLE_FLOOR = 20_000;
/** Every settler looks back this far when it starts (marks a stopped process left unsettled). */
const STARTUP_LOOKBACK_SECONDS = 6 * 3600;
/** Work-list rows may land this long after the second they name (an insert's marks are written before its rows). */
const TOUCH_LAG_SECONDS = 60;
/** Hours and minutes per settle: one count under the locks, one recompute (its ranges: services/domain/usage/rollups-store.ts). */
const UNITS_PER_SETTLE = 200;

/**
 * What to recompute of one meter: whole hours, single minutes of hours marked per minute, and single seconds of
 * minutes still busy (`seconds`, epoch seconds; optional: none).
 */
export interface SettleWork {
  accountId: string;
  meterId: string;
  hours: number[];
  minutes: number[];
  seconds?: number[];
}

/**
 * Recomputes the hours (and minutes) of `work` and records that every mark counted is covered
 * (services/domain/usage/hour-marks.ts). The marks are counted holding the meters' settle locks exclusively — taking them
 * waits for every insert between its marks and its rows, so every row of a counted mark is stored — and the
 * recompute runs after the locks are released: an insert landing meanwhile made its marks after the count, so
 * whatever of its rows the recompute picks up, the hour (or minute) stays pending until a later settle. Inserts
 * wait for a count, never for a recompute. A whole hour still open and marked per minute gets its minutes
 * recomputed too, so it stays readable per minute when the next insert marks it. Returns the settles written.
 */
export async function settle(
  pg: PgPool,
  shard: UsageShard,
  database: string,
  work: readonly SettleWork[],
  nowMs = Date.now(),
): Promise<number> {
  let written = 0;
  for (const chunk of settleChunks(work)) {
    const where = hoursOfSql(
      chunk.map((w) => ({
        ...w,
        hours: [
          ...w.hours,
          ...w.minutes.map((m) => Math.floor(m / 60)),
          ...(w.seconds ?? []).map((sec) => Math.floor(sec / 3600)),
        ],
      })),
    );
    // Most of the replication wait before the lock, which holds the meters' inserts up: inside it only the marks
    // stored meanwhile are fetched.
    await shard.syncReplica(MARKS_TABLE);
    const counted = await withAccountLocks(
      pg,
      ACCOUNT_LOCK.SETTLE,
      chunk.map((k) => settleLockName(k.accountId, k.meterId)),
      'exclusive',
      async () => {
        // On a cluster: this replica first holds every mark its twins hold.
        await shard.syncReplica(MARKS_TABLE);
        return shard.replicas.run((ch) => hourStates(ch, database, where, shard.local));
      },
    );
    const states = new Map(counted.map((s) => [stateKey(s), s] as const));
    const hours: HourKeys[] = [];
    const minutes: HourKeys[] = [];
    const seconds: HourKeys[] = [];
    const settles: Settle[] = [];
    const openFrom = Math.floor(nowMs / HOUR_MS);
    for (const w of chunk) {
      const meterMinutes = new Set<number>();
      for (const hour of w.hours) {
        const s = states.get(stateKey({ ...w, hour }));
        if (s && !isSettled(s))
          settles.push({ ...w, hour, minute: WHOLE_HOUR, touched: s.touched, records: s.records });
        if (s && hour >= openFrom && isMarkedPerMinute(s))
          for (const [minute, m] of s.minutes) {
            meterMinutes.add(minute);
            settles.push({ ...w, hour, minute, touched: m.touched, records: 0 });
          }
      }
      for (const minute of w.minutes) {
        const hour = Math.floor(minute / 60);
        const m = states.get(stateKey({ ...w, hour }))?.minutes.get(minute);
        if (!m || meterMinutes.has(minute)) continue;
        meterMinutes.add(minute);
        settles.push({ ...w, hour, minute, touched: m.touched, records: 0 });
      }
      const meterSeconds: number[] = [];
      for (const second of w.seconds ?? []) {
        const minute = Math.floor(second / 60);
        const m = states.get(stateKey({ ...w, hour: Math.floor(minute / 60) }))?.minutes.get(minute);
        const sec = m?.seconds.get(second);
        // A minute recomputed whole in this settle needs none of its seconds.
        if (!m || !sec || meterMinutes.has(minute) || !isMarkedPerSecond(m)) continue;
        meterSeconds.push(second);
        settles.push({ ...w, hour: Math.floor(minute / 60), minute: second, touched: sec.touched, records: 0 });
      }
      if (w.hours.length) hours.push({ ...w, hours: w.hours });
      if (meterMinutes.size) minutes.push({ ...w, hours: [...meterMinutes] });
      if (meterSeconds.length) seconds.push({ ...w, hours: meterSeconds });
    }
    // On a cluster: this replica first holds every row of the counted marks (stored before the count).
    await shard.syncReplica(USAGE_TABLE);
    await shard.syncReplica(UNIQUE_METERS_TABLE);
    await shard.replicas.run(async (ch) => {
      await recomputeHours(ch, database, hours, shard.local);
      await recomputeMinutes(ch, database, minutes, shard.local);
      await recomputeSeconds(ch, database, seconds, shard.local);
    });
    // On a cluster: every replica holds the new rollups before any can hold the settle vouching for them. A read
    // (through Distributed) may take the settle from one replica and the rollup from another, and replication
    // keeps no order between tables: a settle fetched before its rollup made a read count the older rollup.
    if (hours.length) {
      await shard.syncEveryReplica(ROLLUP_TABLE);
      await shard.syncEveryReplica(UNIQUE_ROLLUP_TABLE);
    }
    if (minutes.length) await shard.syncEveryReplica(MINUTE_ROLLUP_TABLE);
    if (seconds.length) await shard.syncEveryReplica(SECOND_ROLLUP_TABLE);
    await shard.replicas.run((ch) => writeSettles(ch, database, settles, Date.now(), shard.local));
    written += settles.length;
  }
  return written;
}

/** `work` in lock holds of at most UNITS_PER_SETTLE hours and minutes. */
function settleChunks(work: readonly SettleWork[]): SettleWork[][] {
  const chunks: SettleWork[][] = [];
  let chunk: SettleWork[] = [];
  let units = 0;
  for (const w of work) {
    const all = [
      ...w.hours.map((h) => ({ hour: h })),
      ...w.minutes.map((m) => ({ minute: m })),
      ...(w.seconds ?? []).map((sec) => ({ second: sec })),
    ];
    for (let i = 0; i < all.length; ) {
      const take = all.slice(i, i + UNITS_PER_SETTLE - units);
      chunk.push({
        accountId: w.accountId,
        meterId: w.meterId,
        hours: take.flatMap((u) => ('hour' in u ? [u.hour] : [])),
        minutes: take.flatMap((u) => ('minute' in u ? [u.minute] : [])),
        seconds: take.flatMap((u) => ('second' in u ? [u.second] : [])),
      });
      units += take.length;
      i += take.length;
      if (units >= UNITS_PER_SETTLE) {
        chunks.push(chunk);
        chunk = [];
        units = 0;
      }
    }
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}

const stateKey = (s: { accountId: string; meterId: string; hour: number }) =>
  `${s.accountId}\u0000${s.meterId}\u0000${s.hour}`;

/** settle() of whole hours: the hour-close sweep's recompute. */
export function settleHours(pg: PgPool, shard: UsageShard, database: string, keys: readonly HourKeys[]) {
  return settle(
    pg,
    shard,
    database,
    keys.map((k) => ({ accountId: k.accountId, meterId: k.meterId, hours: [...k.hours], minutes: [] })),
  );
}

/**
 * Whether a marked, unsettled hour is due for a whole-hour recompute at `nowSecond` (`lastSecond`: its latest
 * mark). An open hour marked per minute never is: its quiet minutes are recomputed instead (each once, however
 * often its meter pauses), and the hour when it has closed.
 */
export function settleDue(s: HourState & { lastSecond: number }, nowSecond: number): boolean {
  const closed = (s.hour + 1) * HOUR_MS <= nowSecond * 1000;
  if (!closed && isMarkedPerMinute(s)) return false;
  if (s.lastSecond <= nowSecond - QUIET_SECONDS) return true;
  const grown = s.records - s.settledRecords;
  return closed && grown >= GROWTH_FLOOR && grown >= s.settledRecords;
}

/**
 * Settles marked hours as they become due (settleDue), per shard, from the work list (usage_hour_touches). Any
 * number of consumer processes may run one: a second settle of an hour finds it settled, or settles it again.
 */
export class HourSettler {
  private readonly task: PeriodicTask;
  private readonly cursors = new Map<UsageShard, number>();

  constructor(
    private readonly pg: PgPool,
    private readonly shards: UsageShards,
    private readonly database: string,
    private readonly log: Logger,
    intervalMs = 1_000,
    /** MINUTE_SETTLE_FLOOR; tests lower it. */
    private readonly minuteSettleFloor = MINUTE_SETTLE_FLOOR,
  ) {
    this.task = new PeriodicTask({
      name: 'hour settle',
      everyMs: intervalMs,
      gap: true, // a long pass is followed by a pause, as before: never back to back
      log,
      run: () => this.settleDue(),
      failed: (err) => log.warn({ err: (err as Error).message }, 'hour settle failed; retrying'),
    });
  }

  start(): void {
    void this.task.start();
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
    // Latest mark per hour, per minute (its own marks' and its seconds') and per second.
    const lastOfHour = new Map<string, number>();
    const lastOfMinute = new Map<string, number>();
    const lastOfSecond = new Map<string, number>();
    for (const t of touched) {
      const hk = stateKey(t);
      lastOfHour.set(hk, Math.max(lastOfHour.get(hk) ?? 0, t.lastSecond));
      const slice = sliceOf(t.hour, t.minute);
      if (slice === 'hour') continue;
      const minute = slice === 'second' ? Math.floor(t.minute / 60) : t.minute;
      const mk = `${hk}\u0000${minute}`;
      lastOfMinute.set(mk, Math.max(lastOfMinute.get(mk) ?? 0, t.lastSecond));
      if (slice === 'second') lastOfSecond.set(`${hk}\u0000${t.minute}`, t.lastSecond);
    }
    // The work list's hours by a subquery, not a list: an operator's emitter touches thousands of accounts.
    const states = await shard.replicas.run((ch) =>
      hourStates(ch, this.database, touchedSinceSql(this.database, from, shard.local), shard.local),
    );
    const due = new Map<string, SettleWork>();
    const workOf = (s: HourState) => {
      const k = `${s.accountId}\u0000${s.meterId}`;
      let w = due.get(k);
      if (!w) due.set(k, (w = { accountId: s.accountId, meterId: s.meterId, hours: [], minutes: [] }));
      return w;
    };
    for (const s of states) {
      if (isSettled(s)) continue;
      const hk = stateKey(s);
      const lastSecond = lastOfHour.get(hk) ?? nowSecond;
      if (settleDue({ ...s, lastSecond }, nowSecond)) {
        workOf(s).hours.push(s.hour);
        continue;
      }
      const w = () => {
        const work = workOf(s);
        work.seconds ??= [];
        return work as Required<SettleWork>;
      };
      const open = (s.hour + 1) * HOUR_MS > nowSecond * 1000;
      // A closed hour still busy: found again next time. An open one is settled by its sweep once it has closed,
      // whenever it was last marked, so it never holds the work list back.
      if (!open) next = Math.min(next, lastSecond);
      // A busy open hour: its quiet minutes now, and of a minute still busy its quiet seconds, so reads take only
      // the busy seconds raw (issue 45: a meter under sustained ingest). A small hour is read raw.
      if (!isMarkedPerMinute(s) || s.records < this.minuteSettleFloor) continue;
      for (const [minute, m] of s.minutes) {
        const last = lastOfMinute.get(`${hk}\u0000${minute}`) ?? nowSecond;
        if (isMinuteSettled(m)) continue;
        if (last <= nowSecond - QUIET_SECONDS) {
          workOf(s).minutes.push(minute);
          continue;
        }
        next = Math.min(next, last);
        if (!isMarkedPerSecond(m)) continue;
        for (const [second, sec] of m.seconds) {
          if (isSecondSettled(sec)) continue;
          const lastMark = lastOfSecond.get(`${hk}\u0000${second}`) ?? nowSecond;
          if (lastMark <= nowSecond - SECOND_QUIET_SECONDS) w().seconds.push(second);
        }
      }
    }
    const work = [...due.values()].filter((w) => w.hours.length || w.minutes.length || w.seconds?.length);
    const settled = work.length ? await settle(this.pg, shard, this.database, work) : 0;
    this.cursors.set(shard, Math.max(from, next));
    if (settled) this.log.debug({ settles: settled }, 'usage hours settled');
    return settled;
  }

  /** A problem once settles have failed for a while: reads stay exact (unsettled hours are read raw), only slower. */
  problem(now = Date.now()): string | undefined {
    return this.task.problem(60_000, now);
  }

  async stop(): Promise<void> {
    await this.task.stop();
  }
}
