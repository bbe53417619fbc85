/**
 * Settled hours (issue 27; infra/migrations/clickhouse/370_usage_hour_settles.sql; docs/design.md §10).
 *
 * An insert no longer recomputes the closed hours it touches (each late batch cost its hours' every row: a
 * backfill was quadratic). Instead each insert MARKS what it touches before inserting its rows — per second in an
 * hour still open, the whole hour otherwise — and the settler (services/domain/usage/hour-settler.ts) recomputes
 * a marked hour once it has been quiet for a moment, or once its marked rows have doubled since its last
 * recompute; of an open hour a quiet minute into the minute rollups and, of a minute still busy, its quiet
 * seconds into the second rollups (issue 45: a meter under sustained ingest): so each row is recomputed a bounded
 * number of times, whatever the lateness. A recompute counts the marks holding the meters' settle locks
 * exclusively (inserts hold them shared from their marks to their rows), recomputes, and records the count as a
 * SETTLE: every row of a counted mark is in that recompute.
 *
 * The tables' `minute` column holds WHOLE_HOUR, an epoch second (marks of an open hour, and their settles), or an
 * epoch minute (a minute's settle; marks of consumers older than the second marks): the ranges of an hour's
 * seconds and of its minutes never overlap, so `sliceOf` tells them apart.
 *
 * Readers (services/domain/usage/read-plan.ts) take an hour from the hourly rollups when every mark is covered by an hour
 * settle; an hour only ever marked per minute or second from the minute rollups of its settled minutes, the second
 * rollups of the settled seconds of its other minutes, and the rest raw; anything else raw. So a read is exact at
 * every moment, and as fast as the rollups once quiet — a hot meter's current hour costs its last seconds.
 */
import type { TouchedByAccount } from './row-scan.js';
import { chString, HOUR_MS } from './sql.js';

export const MARKS_TABLE = 'usage_hour_marks';
export const SETTLES_TABLE = 'usage_hour_settles';
export const TOUCHES_TABLE = 'usage_hour_touches';

/** `minute` of a mark or settle of a whole hour. */
export const WHOLE_HOUR = -1;
const MINUTE_MS = 60_000;
const SECONDS_PER_HOUR = 3600;

/** Rows per (meter, epoch second) of an insert: account → meter → second → rows. */
export type SecondCounts = Map<string, Map<string, Map<number, number>>>;

/** What a `minute` column value of `hour` names: the whole hour, one of its minutes or one of its seconds. */
export function sliceOf(hour: number, value: number): 'hour' | 'minute' | 'second' {
  if (value === WHOLE_HOUR) return 'hour';
  return value >= hour * SECONDS_PER_HOUR && value < (hour + 1) * SECONDS_PER_HOUR ? 'second' : 'minute';
}

/** Adds `from`'s counts into `into`. */
export function addCounts(into: SecondCounts, from: TouchedByAccount): void {
  for (const [account, meters] of from) {
    let a = into.get(account);
    if (!a) into.set(account, (a = new Map()));
    for (const [meter, minutes] of meters) {
      let m = a.get(meter);
      if (!m) a.set(meter, (m = new Map()));
      for (const [second, n] of minutes) m.set(second, (m.get(second) ?? 0) + n);
    }
  }
}

/**
 * What an insert at `nowMs` marks for rows in `second`: that second (in the `minute` column) while its hour is
 * open, else the whole hour.
 */
export function markOf(second: number, nowMs: number): { hour: number; minute: number } {
  const hour = Math.floor(second / SECONDS_PER_HOUR);
  return hour >= Math.floor(nowMs / HOUR_MS) ? { hour, minute: second } : { hour, minute: WHOLE_HOUR };
}

/** The marks of what `counts` touches, for markHours (hour-marks-store.ts). */
export function marksOf(counts: SecondCounts, nowMs: number): Mark[] {
  const marks: Mark[] = [];
  for (const [accountId, meters] of counts)
    for (const [meterId, seconds] of meters) {
      const marked = new Map<string, Mark>();
      const openRows = new Map<number, number>();
      for (const [second, n] of seconds) {
        const k = markOf(second, nowMs);
        const key = `${k.hour}:${k.minute}`;
        const m = marked.get(key);
        if (m) m.records += n;
        else marked.set(key, { accountId, meterId, ...k, records: n, listed: true });
        if (k.minute !== WHOLE_HOUR) openRows.set(k.hour, (openRows.get(k.hour) ?? 0) + n);
      }
      // An open hour gets few rows from this insert: left off the work list (one row per customer per insert
      // would cost an operator's emitter a row per record). Its marks still keep reads exact; the settler finds
      // its seconds with the hour's next big insert, or its sweep when it closes.
      for (const m of marked.values())
        if (m.minute !== WHOLE_HOUR && (openRows.get(m.hour) ?? 0) < WORK_LIST_FLOOR) m.listed = false;
      marks.push(...marked.values());
    }
  return marks;
}

/** The whole-hour marks of `hours` of one meter, for markWholeHours (hour-marks-store.ts). */
export function wholeHourMarks(accountId: string, meterId: string, hours: Iterable<number>): Mark[] {
  return [...hours].map((hour) => ({ accountId, meterId, hour, minute: WHOLE_HOUR, records: 0, listed: true }));
}

/** A mark to write: one more touch of an (account, meter, hour, minute). */
export interface Mark {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  records: number;
  /** On the settler's work list. */
  listed: boolean;
}

/** Rows an insert must bring to an open hour to put it on the work list (marksOf). */
const WORK_LIST_FLOOR = 100;

/** A second of an hour marked while open: its marks and its latest second settle. */
export interface SecondState {
  touched: number;
  settledTouched: number;
  /** Of its marks, those whose insert wrote partials (./partials.ts). */
  partial: number;
}

/**
 * A minute of an hour marked while open: every mark of it (its seconds', and any of its own from an older
 * consumer), its latest minute settle, and its seconds.
 */
export interface MinuteState {
  touched: number;
  settledTouched: number;
  /** Marks of the minute itself (consumers older than second marks): its seconds alone then don't cover it. */
  minuteMarks: number;
  /** Epoch second → its marks and second settle. */
  seconds: Map<number, SecondState>;
}

/** One (account, meter, hour): its marks and its latest hour settle, and its minutes. */
export interface HourState {
  accountId: string;
  meterId: string;
  hour: number;
  /** Every mark of the hour, whole-hour, per-minute and per-second. */
  touched: number;
  records: number;
  /** Marks of the whole hour (records after it closed, corrections): the hour is then not read per minute. */
  wholeHourTouched: number;
  settledTouched: number;
  settledRecords: number;
  /** Of its second marks, those whose insert wrote partials: the meter's consumers write them (./partials.ts). */
  partialMarks: number;
  /** Epoch minute → its marks and settles (minutes with marks only). */
  minutes: Map<number, MinuteState>;
}

export const isSettled = (s: HourState) => s.touched <= s.settledTouched;
export const isMinuteSettled = (m: MinuteState) => m.touched <= m.settledTouched;
export const isSecondSettled = (m: SecondState) => m.touched <= m.settledTouched;
/** Every insert that marked the second wrote its partials (./partials.ts). */
export const hasPartials = (m: SecondState) => m.partial >= m.touched;
/**
 * Whether a read takes a pending second from its partials rather than its raw rows: when every insert that marked
 * it wrote them; or when the meter's inserts in this hour write partials and nothing of the second — not it, its
 * minute, nor its hour — was ever recomputed. Then its marks without partials are inserts in flight (or one that
 * failed before its partials and waits for its redelivery): their records count from the moment their partials
 * are stored, as a record becomes visible a moment after it is accepted. Raw after a recompute: the recompute
 * counted the rows of such a failed insert, and no later read may answer less than a read of it did.
 */
export const isReadFromPartials = (hour: HourState, minute: MinuteState, second: SecondState) =>
  hasPartials(second) ||
  (hour.partialMarks > 0 && second.settledTouched === 0 && minute.settledTouched === 0 && hour.settledTouched === 0);
/** Whether every record of the hour is in a minute or second mark: it can be read per minute. */
export const isMarkedPerMinute = (s: HourState) => s.wholeHourTouched === 0 && s.minutes.size > 0;
/** Whether an unsettled minute can be read per second: every record of it is in a second mark. */
export const isMarkedPerSecond = (m: MinuteState) => m.minuteMarks === 0;
/** Whether a read takes none of the minute raw: settled, or marked per second with every second settled. */
export const isMinuteReadFromRollups = (m: MinuteState) =>
  isMinuteSettled(m) || (isMarkedPerSecond(m) && [...m.seconds.values()].every(isSecondSettled));
/** Whether a read takes none of the hour raw: settled, or marked per minute with no minute read raw. */
export const isReadFromRollups = (s: HourState) =>
  isSettled(s) || (isMarkedPerMinute(s) && [...s.minutes.values()].every(isMinuteReadFromRollups));

/** One row of hourStates' query: marks (t, r) and latest settle (st, sr) of one (account, meter, hour, minute). */
export interface StateRow {
  a: string;
  m: string;
  h: number;
  n: number;
  t: number;
  r: string | number;
  st: number;
  sr: string | number;
  /** Marks whose insert wrote partials. */
  p?: number;
}

/** The hours' states from hourStates' rows: minutes gather their seconds' marks and their own settles. */
export function statesOf(rows: readonly StateRow[]): HourState[] {
  const out = new Map<string, HourState>();
  const minuteSettles: StateRow[] = [];
  for (const x of rows) {
    const k = `${x.a}\u0000${x.m}\u0000${x.h}`;
    let s = out.get(k);
    if (!s)
      out.set(
        k,
        (s = {
          accountId: x.a,
          meterId: x.m,
          hour: x.h,
          touched: 0,
          records: 0,
          wholeHourTouched: 0,
          settledTouched: 0,
          settledRecords: 0,
          partialMarks: 0,
          minutes: new Map(),
        }),
      );
    s.touched += x.t;
    s.records += Number(x.r);
    const slice = sliceOf(x.h, x.n);
    if (slice === 'hour') {
      s.wholeHourTouched += x.t;
      s.settledTouched = x.st;
      s.settledRecords = Number(x.sr);
      continue;
    }
    const minuteOf = slice === 'second' ? Math.floor(x.n / 60) : x.n;
    // A minute's settle with no marks of the minute itself (its marks are its seconds'): kept for the minute below.
    if (x.t === 0) {
      if (slice === 'minute') minuteSettles.push(x);
      continue;
    }
    const m = minuteState(s, minuteOf);
    m.touched += x.t;
    if (slice === 'second') {
      m.seconds.set(x.n, { touched: x.t, settledTouched: x.st, partial: x.p ?? 0 });
      s.partialMarks += x.p ?? 0;
    } else {
      m.minuteMarks += x.t;
      m.settledTouched = x.st;
    }
  }
  for (const x of minuteSettles) {
    const m = out.get(`${x.a}\u0000${x.m}\u0000${x.h}`)!.minutes.get(x.n);
    if (m) m.settledTouched = x.st;
  }
  return [...out.values()];
}

function minuteState(s: HourState, minute: number): MinuteState {
  let m = s.minutes.get(minute);
  if (!m) s.minutes.set(minute, (m = { touched: 0, settledTouched: 0, minuteMarks: 0, seconds: new Map() }));
  return m;
}

/**
 * A settle to record: the marks of an hour (minute WHOLE_HOUR), of one minute (an epoch minute) or of one second
 * (an epoch second), as counted under the locks.
 */
export interface Settle {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  touched: number;
  records: number;
}

/** A marked (account, meter, hour, minute) of the work list, with the last second it was marked in. */
export interface Touch {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  lastSecond: number;
}

/** A condition selecting the given hours of the given meters (for hourStates). */
export function hoursOfSql(keys: readonly { accountId: string; meterId: string; hours: Iterable<number> }[]): string {
  return (
    keys
      .map(
        (k) =>
          `(account_id = ${chString(k.accountId)} AND meter_id = ${chString(k.meterId)} AND hour IN (${[...new Set(k.hours)].join(', ')}))`,
      )
      .join(' OR ') || '0'
  );
}

export { MINUTE_MS };
