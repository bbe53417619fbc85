/**
 * Which part of a read comes from rollups and which from raw rows (services/domain/usage/read-sql.ts builds the SELECT).
 * A whole hour is read from `usage_hourly` when its rollup holds every record: swept (every hour up to the sweep
 * watermark) or settled since (the current hour too, once quiet), and not marked by an insert since its last
 * recompute (services/domain/usage/hour-marks.ts). Everything else — partial hours at the edges (a period ending
 * mid-hour), unswept and unsettled hours, hours with late records pending — is read raw, so a read is exact
 * whatever is pending. An hour pending but only ever marked per minute or second (the current hour of a busy
 * meter) is read from the minute rollups of its settled minutes (`usage_minutely`), of its other minutes from the
 * second rollups of their settled seconds (`usage_secondly`), and the rest — under sustained ingest, the last few
 * seconds — from the consumer's partials of them (`usage_partials`, ./partials.ts), else raw: when every insert
 * that marked them wrote its partials, or when nothing of them was ever recomputed (an insert in flight then
 * counts once its partials are stored: hour-marks.ts isReadFromPartials).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import {
  type HourState,
  isMarkedPerMinute,
  isMarkedPerSecond,
  isMinuteSettled,
  isSecondSettled,
  isSettled,
  isReadFromPartials,
} from './hour-marks.js';
import { hourStates } from './hour-marks-store.js';
import { HOUR_MS } from './sql.js';
import { sweptThrough } from './rollups-store.js';

const MINUTE_MS = 60_000;
const SECOND_MS = 1_000;

export interface ReadPlan {
  /** [fromHour, toHour) ranges read from hourly rollups. */
  rollupHours: [number, number][];
  /** [fromMinute, toMinute) ranges (epoch minutes) read from minute rollups. */
  rollupMinutes?: [number, number][];
  /** [fromSecond, toSecond) ranges (epoch seconds) read from second rollups. */
  rollupSeconds?: [number, number][];
  /** [fromSecond, toSecond) ranges (epoch seconds) of pending seconds read from the consumer's partials. */
  partialSeconds?: [number, number][];
  rawRanges: [number, number][];
}

/** Of a pending minute: its seconds still pending (the others from second rollups), or RAW_MINUTE (all raw). */
export type PendingMinute = ReadonlySet<number> | typeof RAW_MINUTE;
export const RAW_MINUTE = 'raw';

/**
 * Hours whose rollups are stale (marked since their last recompute); hours settled whether swept or not; and of
 * the pending hours those readable per minute, with the minutes still pending in them (epoch minute → how).
 */
export interface PlanHours {
  pending: ReadonlySet<number>;
  settled: ReadonlySet<number>;
  perMinute?: ReadonlyMap<number, ReadonlyMap<number, PendingMinute>>;
  /**
   * Of hours read per minute whose every mark (of every meter read) is a second's: the epoch minutes and epoch
   * seconds marked. A minute or second of such an hour with no mark holds no record (an insert marks before it
   * writes), so it is read from nowhere — a hot meter's read then has no minute or second rollup part until
   * something in its hour is settled (each part costs ClickHouse ~1 ms of CPU however empty).
   */
  marked?: ReadonlyMap<number, ReadonlySet<number>>;
  /** Pending seconds (in perMinute) that every meter read can answer from partials (isReadFromPartials). */
  partialSeconds?: ReadonlySet<number>;
}

const NO_HOURS: PlanHours = { pending: new Set(), settled: new Set() };

export function readPlan(
  startMs: number,
  endMs: number,
  swept: number | undefined,
  hours: PlanHours = NO_HOURS,
): ReadPlan {
  const firstFull = Math.ceil(startMs / HOUR_MS);
  const lastFullEnd = Math.floor(endMs / HOUR_MS);
  if (firstFull >= lastFullEnd) return { rollupHours: [], rawRanges: [[startMs, endMs]] };
  const fromRollup = (h: number) =>
    !hours.pending.has(h) && ((swept !== undefined && h <= swept) || hours.settled.has(h));
  const rollupHours: [number, number][] = [];
  const rollupMinutes: [number, number][] = [];
  const rollupSeconds: [number, number][] = [];
  const partialSeconds: [number, number][] = [];
  const rawRanges: [number, number][] = [];
  const add = (list: [number, number][], from: number, to: number) => {
    const last = list[list.length - 1];
    if (last && last[1] === from) last[1] = to;
    else list.push([from, to]);
  };
  if (startMs < firstFull * HOUR_MS) add(rawRanges, startMs, firstFull * HOUR_MS);
  // Runs of hours: a swept range with nothing pending is one comparison per hour, and one range.
  for (let h = firstFull; h < lastFullEnd; h++) {
    const pendingMinutes = hours.perMinute?.get(h);
    const marked = hours.marked?.get(h);
    const holdsRecords = (minuteOrSecond: number) => !marked || marked.has(minuteOrSecond);
    if (fromRollup(h)) add(rollupHours, h, h + 1);
    else if (pendingMinutes)
      for (let m = h * 60; m < (h + 1) * 60; m++) {
        const pending = pendingMinutes.get(m);
        if (pending === undefined) {
          if (holdsRecords(m)) add(rollupMinutes, m, m + 1);
        } else if (pending === RAW_MINUTE) add(rawRanges, m * MINUTE_MS, (m + 1) * MINUTE_MS);
        else
          for (let sec = m * 60; sec < (m + 1) * 60; sec++) {
            if (!pending.has(sec)) {
              if (holdsRecords(sec)) add(rollupSeconds, sec, sec + 1);
            } else if (hours.partialSeconds?.has(sec)) add(partialSeconds, sec, sec + 1);
            else add(rawRanges, sec * SECOND_MS, (sec + 1) * SECOND_MS);
          }
      }
    else add(rawRanges, h * HOUR_MS, (h + 1) * HOUR_MS);
  }
  if (lastFullEnd * HOUR_MS < endMs) add(rawRanges, lastFullEnd * HOUR_MS, endMs);
  const plan: ReadPlan = { rollupHours, rawRanges };
  if (rollupMinutes.length) plan.rollupMinutes = rollupMinutes;
  if (rollupSeconds.length) plan.rollupSeconds = rollupSeconds;
  if (partialSeconds.length) plan.partialSeconds = partialSeconds;
  return plan;
}

/** The condition on `column` ('hour' or 'minute') of a plan's rollup part. */
export function rollupRangesSql(ranges: readonly [number, number][], column = 'hour'): string {
  return `(${ranges.map(([a, b]) => (b === a + 1 ? `${column} = ${a}` : `(${column} >= ${a} AND ${column} < ${b})`)).join(' OR ')})`;
}

/**
 * The plan with its minute and second rollups and its partials read raw instead (a read that has no such part:
 * unique counts).
 */
export function withoutMinutes(plan: ReadPlan): ReadPlan {
  if (!plan.rollupMinutes?.length && !plan.rollupSeconds?.length && !plan.partialSeconds?.length) return plan;
  const raw = [
    ...plan.rawRanges,
    ...(plan.rollupMinutes ?? []).map(([a, b]): [number, number] => [a * MINUTE_MS, b * MINUTE_MS]),
    ...(plan.rollupSeconds ?? []).map(([a, b]): [number, number] => [a * SECOND_MS, b * SECOND_MS]),
    ...(plan.partialSeconds ?? []).map(([a, b]): [number, number] => [a * SECOND_MS, b * SECOND_MS]),
  ];
  return { rollupHours: plan.rollupHours, rawRanges: joined(raw) };
}

/** Ranges sorted, and those that touch joined into one. */
function joined(ranges: [number, number][]): [number, number][] {
  ranges.sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of ranges) {
    const last = out[out.length - 1];
    if (last && last[1] === a) last[1] = b;
    else out.push([a, b]);
  }
  return out;
}

/**
 * The plan with its partials read raw instead (a read they can't answer: percentiles have no t-digest there, and
 * a corrected meter's cancellations are not subtracted from them).
 */
export function withoutPartials(plan: ReadPlan): ReadPlan {
  if (!plan.partialSeconds?.length) return plan;
  const { partialSeconds, ...rest } = plan;
  const raw = [...plan.rawRanges, ...partialSeconds.map(([a, b]): [number, number] => [a * SECOND_MS, b * SECOND_MS])];
  return { ...rest, rawRanges: joined(raw) };
}

/**
 * The hours of a read of `meters` (a condition on account_id and meter_id) over [startMs, endMs) for readPlan:
 * its whole hours' marks and settles looked up (one small query). An hour is pending when any of its meters' marks
 * is not covered by a recompute, settled when every one is.
 */
export async function planHours(
  ch: ClickHouseClient,
  database: string,
  meters: string,
  startMs: number,
  endMs: number,
): Promise<PlanHours> {
  const firstFull = Math.ceil(startMs / HOUR_MS);
  const lastFullEnd = Math.floor(endMs / HOUR_MS);
  if (firstFull >= lastFullEnd) return NO_HOURS;
  const states = await hourStates(ch, database, `${meters} AND hour >= ${firstFull} AND hour < ${lastFullEnd}`);
  const pending = new Set<number>();
  for (const s of states) if (!isSettled(s)) pending.add(s.hour);
  const settled = new Set<number>();
  const notPerMinute = new Set<number>();
  const pendingMinutes = new Map<number, Map<number, PendingMinute>>();
  const settledMinutes = new Set<number>();
  // Seconds some meter can't answer from partials (isReadFromPartials): raw when pending, whichever meter is pending there.
  const withoutPartialSeconds = new Set<number>();
  for (const s of states) {
    if (!pending.has(s.hour)) {
      settled.add(s.hour);
      continue;
    }
    // Read per minute only if every meter's records in the hour are in minute or second marks; then a minute not
    // covered by a minute settle is read per second (its seconds not covered by a second settle raw), or raw
    // when any of its marks is not a second's. A read of several meters merges their pending seconds; a minute
    // one meter has settled whole (its seconds may be in no second rollup) and another pending is read raw.
    if (!isMarkedPerMinute(s)) notPerMinute.add(s.hour);
    let minutes = pendingMinutes.get(s.hour);
    if (!minutes) pendingMinutes.set(s.hour, (minutes = new Map()));
    for (const [minute, m] of s.minutes) {
      if (isMinuteSettled(m)) {
        settledMinutes.add(minute);
        continue;
      }
      const had = minutes.get(minute);
      if (had === RAW_MINUTE) continue;
      if (!isMarkedPerSecond(m)) {
        minutes.set(minute, RAW_MINUTE);
        continue;
      }
      const seconds = new Set(had ?? []);
      for (const [second, sec] of m.seconds) {
        if (!isSecondSettled(sec)) seconds.add(second);
        if (!isReadFromPartials(s, m, sec)) withoutPartialSeconds.add(second);
      }
      minutes.set(minute, seconds);
    }
  }
  for (const h of notPerMinute) pendingMinutes.delete(h);
  for (const minutes of pendingMinutes.values())
    for (const minute of minutes.keys()) if (settledMinutes.has(minute)) minutes.set(minute, RAW_MINUTE);
  const partialSeconds = new Set<number>();
  for (const minutes of pendingMinutes.values())
    for (const seconds of minutes.values())
      if (seconds !== RAW_MINUTE)
        for (const sec of seconds) if (!withoutPartialSeconds.has(sec)) partialSeconds.add(sec);
  return {
    pending,
    settled,
    perMinute: pendingMinutes,
    marked: markedPerSecond(states, pendingMinutes),
    partialSeconds,
  };
}

/**
 * PlanHours.marked of the hours read per minute: every meter's marks in them, pending or settled. An hour where
 * any meter has a whole-hour or a minute's own mark is left out (its records are not all in second marks).
 */
function markedPerSecond(
  states: readonly HourState[],
  perMinute: ReadonlyMap<number, unknown>,
): Map<number, Set<number>> {
  const marked = new Map<number, Set<number>>();
  const mixed = new Set<number>();
  for (const s of states) {
    if (!perMinute.has(s.hour)) continue;
    if (s.wholeHourTouched > 0) mixed.add(s.hour);
    let set = marked.get(s.hour);
    if (!set) marked.set(s.hour, (set = new Set()));
    for (const [minute, m] of s.minutes) {
      if (m.minuteMarks > 0) mixed.add(s.hour);
      set.add(minute);
      for (const second of m.seconds.keys()) set.add(second);
    }
  }
  for (const h of mixed) marked.delete(h);
  return marked;
}

/** How long a read trusts the sweep watermark it fetched: a stale one only makes it read more raw rows. */
const WATERMARK_TTL_MS = 1_000;
const watermarks = new Map<string, { at: number; value: Promise<number | undefined> }>();

/** Every hour ≤ this one is swept (cached WATERMARK_TTL_MS). */
export function watermark(ch: ClickHouseClient, database: string): Promise<number | undefined> {
  const cached = watermarks.get(database);
  if (cached && Date.now() - cached.at < WATERMARK_TTL_MS) return cached.value;
  const value = sweptThrough(ch, database);
  watermarks.set(database, { at: Date.now(), value });
  value.catch(() => watermarks.delete(database));
  return value;
}
