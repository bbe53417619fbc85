/**
 * Settled hours (issue 27; infra/migrations/clickhouse/370_usage_hour_settles.sql; docs/design.md §10).
 *
 * An insert no longer recomputes the closed hours it touches (each late batch cost its hours' every row: a
 * backfill was quadratic). Instead each insert MARKS what it touches before inserting its rows — per minute in an
 * hour still open, the whole hour otherwise — and the settler (services/domain/usage/hour-settler.ts) recomputes
 * a marked hour once it has been quiet for a moment, or once its marked rows have doubled since its last
 * recompute, and a quiet minute of an open hour into the minute rollups: so each row is recomputed a bounded
 * number of times, whatever the lateness. A recompute counts the marks holding the meters' settle locks
 * exclusively (inserts hold them shared from their marks to their rows), recomputes, and records the count as a
 * SETTLE: every row of a counted mark is in that recompute.
 *
 * Readers (services/domain/usage/read-plan.ts) take an hour from the hourly rollups when every mark is covered by an hour
 * settle; an hour only ever marked per minute from the minute rollups of its settled minutes and the rest raw;
 * anything else raw. So a read is exact at every moment, and as fast as the rollups once quiet — a hot meter's
 * current hour costs its pending minutes, not the hour.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import type { TouchedByAccount } from './row-scan.js';
import { chString, HOUR_MS } from './sql.js';
import { tsvEscape } from '../../../shared/usage/wire.js';

export const MARKS_TABLE = 'usage_hour_marks';
export const SETTLES_TABLE = 'usage_hour_settles';
export const TOUCHES_TABLE = 'usage_hour_touches';

/** `minute` of a mark or settle of a whole hour. */
export const WHOLE_HOUR = -1;
const MINUTE_MS = 60_000;
const MINUTES_PER_HOUR = 60;

/** Rows per (meter, epoch minute) of an insert: account → meter → minute → rows. */
export type MinuteCounts = Map<string, Map<string, Map<number, number>>>;

/** Adds `from`'s counts into `into`. */
export function addCounts(into: MinuteCounts, from: TouchedByAccount): void {
  for (const [account, meters] of from) {
    let a = into.get(account);
    if (!a) into.set(account, (a = new Map()));
    for (const [meter, minutes] of meters) {
      let m = a.get(meter);
      if (!m) a.set(meter, (m = new Map()));
      for (const [minute, n] of minutes) m.set(minute, (m.get(minute) ?? 0) + n);
    }
  }
}

async function insertTsv(
  ch: ClickHouseClient,
  table: string,
  columns: readonly string[],
  lines: readonly string[],
): Promise<void> {
  if (lines.length === 0) return;
  await ch.insert({
    table,
    values: Readable.from([Buffer.from(lines.join(''))], { objectMode: false }),
    format: 'TabSeparated',
    columns: [...columns] as [string, ...string[]],
  });
}

/** What an insert at `nowMs` marks for rows in `minute`: that minute while its hour is open, else the whole hour. */
export function markOf(minute: number, nowMs: number): { hour: number; minute: number } {
  const hour = Math.floor(minute / MINUTES_PER_HOUR);
  return hour >= Math.floor(nowMs / HOUR_MS) ? { hour, minute } : { hour, minute: WHOLE_HOUR };
}

/**
 * Marks what `counts` touches as touched by one more insert (and the work list with `nowMs`'s second). Called
 * holding the meters' settle locks shared, before the rows are inserted: a recompute that counts this mark
 * waits for the rows.
 */
export async function markHours(
  ch: ClickHouseClient,
  database: string,
  counts: MinuteCounts,
  nowMs: number,
  local = '',
): Promise<void> {
  const marks: Mark[] = [];
  for (const [accountId, meters] of counts)
    for (const [meterId, minutes] of meters) {
      const marked = new Map<string, Mark>();
      const openRows = new Map<number, number>();
      for (const [minute, n] of minutes) {
        const k = markOf(minute, nowMs);
        const key = `${k.hour}:${k.minute}`;
        const m = marked.get(key);
        if (m) m.records += n;
        else marked.set(key, { accountId, meterId, ...k, records: n, listed: true });
        if (k.minute !== WHOLE_HOUR) openRows.set(k.hour, (openRows.get(k.hour) ?? 0) + n);
      }
      // An open hour gets few rows from this insert: left off the work list (one row per customer per insert
      // would cost an operator's emitter a row per record). Its marks still keep reads exact; the settler finds
      // its minutes with the hour's next big insert, or its sweep when it closes.
      for (const m of marked.values())
        if (m.minute !== WHOLE_HOUR && (openRows.get(m.hour) ?? 0) < WORK_LIST_FLOOR) m.listed = false;
      marks.push(...marked.values());
    }
  await writeMarks(ch, database, marks, nowMs, local);
}

/**
 * Marks whole hours of one meter (a correction: its cancellations and replacement rows are in no minute mark, so
 * the hours are read raw, or from hourly rollups once settled, never per minute).
 */
export function markWholeHours(
  ch: ClickHouseClient,
  database: string,
  accountId: string,
  meterId: string,
  hours: Iterable<number>,
  nowMs: number,
  local = '',
): Promise<void> {
  const marks = [...hours].map((hour) => ({ accountId, meterId, hour, minute: WHOLE_HOUR, records: 0, listed: true }));
  return writeMarks(ch, database, marks, nowMs, local);
}

interface Mark {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  records: number;
  /** On the settler's work list. */
  listed: boolean;
}

/** Rows an insert must bring to an open hour to put it on the work list (markHours). */
const WORK_LIST_FLOOR = 100;

async function writeMarks(
  ch: ClickHouseClient,
  database: string,
  marks: readonly Mark[],
  nowMs: number,
  local: string,
): Promise<void> {
  const second = Math.floor(nowMs / 1000);
  const key = (m: Mark) => `${tsvEscape(m.accountId)}\t${tsvEscape(m.meterId)}\t${m.hour}\t${m.minute}`;
  // The work list first: a mark the settler can't find would leave its hour raw until the next touch.
  await insertTsv(
    ch,
    `${database}.${TOUCHES_TABLE}${local}`,
    ['second', 'account_id', 'meter_id', 'hour', 'minute'],
    marks.filter((m) => m.listed).map((m) => `${second}\t${key(m)}\n`),
  );
  await insertTsv(
    ch,
    `${database}.${MARKS_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'minute', 'touched', 'records'],
    marks.map((m) => `${key(m)}\t1\t${m.records}\n`),
  );
}

/** A minute of an hour marked while open: its marks and its latest minute settle. */
export interface MinuteState {
  touched: number;
  settledTouched: number;
}

/** One (account, meter, hour): its marks and its latest hour settle, and its minutes. */
export interface HourState {
  accountId: string;
  meterId: string;
  hour: number;
  /** Every mark of the hour, whole-hour and per-minute. */
  touched: number;
  records: number;
  /** Marks of the whole hour (records after it closed, corrections): the hour is then not read per minute. */
  wholeHourTouched: number;
  settledTouched: number;
  settledRecords: number;
  /** Epoch minute → its marks and minute settle. */
  minutes: Map<number, MinuteState>;
}

export const isSettled = (s: HourState) => s.touched <= s.settledTouched;
export const isMinuteSettled = (m: MinuteState) => m.touched <= m.settledTouched;
/** Whether every record of the hour is in a minute mark: it can be read per minute. */
export const isMarkedPerMinute = (s: HourState) => s.wholeHourTouched === 0 && s.minutes.size > 0;
/** Whether a read takes none of the hour raw: settled, or marked per minute with every minute settled. */
export const isReadFromRollups = (s: HourState) =>
  isSettled(s) || (isMarkedPerMinute(s) && [...s.minutes.values()].every(isMinuteSettled));

/** Marks and settles of the hours matching `where` (a condition on account_id, meter_id, hour). */
export async function hourStates(
  ch: ClickHouseClient,
  database: string,
  where: string,
  local = '',
): Promise<HourState[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, hour AS h, minute AS n, sum(t) AS t, sum(r) AS r, max(st) AS st, max(sr) AS sr FROM (
        SELECT account_id, meter_id, hour, minute, touched AS t, records AS r, toUInt64(0) AS st, toUInt64(0) AS sr
        FROM ${database}.${MARKS_TABLE}${local} WHERE ${where}
        UNION ALL
        SELECT account_id, meter_id, hour, minute, toUInt64(0), toUInt64(0), touched, records
        FROM ${database}.${SETTLES_TABLE}${local} WHERE ${where}
      ) GROUP BY account_id, meter_id, hour, minute`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{
    a: string;
    m: string;
    h: string;
    n: string;
    t: string;
    r: string;
    st: string;
    sr: string;
  }>();
  const out = new Map<string, HourState>();
  for (const x of rows) {
    const k = `${x.a}\u0000${x.m}\u0000${x.h}`;
    let s = out.get(k);
    if (!s)
      out.set(
        k,
        (s = {
          accountId: x.a,
          meterId: x.m,
          hour: Number(x.h),
          touched: 0,
          records: 0,
          wholeHourTouched: 0,
          settledTouched: 0,
          settledRecords: 0,
          minutes: new Map(),
        }),
      );
    const minute = Number(x.n);
    const touched = Number(x.t);
    s.touched += touched;
    s.records += Number(x.r);
    if (minute === WHOLE_HOUR) {
      s.wholeHourTouched += touched;
      s.settledTouched = Number(x.st);
      s.settledRecords = Number(x.sr);
    } else if (touched > 0) s.minutes.set(minute, { touched, settledTouched: Number(x.st) });
  }
  return [...out.values()];
}

/** A settle to record: the marks of an hour (minute WHOLE_HOUR) or of one minute, as counted under the locks. */
export interface Settle {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  touched: number;
  records: number;
}

/** Records that the marks counted under the exclusive locks are covered by a recompute. */
export async function writeSettles(
  ch: ClickHouseClient,
  database: string,
  settles: readonly Settle[],
  nowMs: number,
  local = '',
): Promise<void> {
  await insertTsv(
    ch,
    `${database}.${SETTLES_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'minute', 'touched', 'records', 'settled_ms'],
    settles.map(
      (s) =>
        `${tsvEscape(s.accountId)}\t${tsvEscape(s.meterId)}\t${s.hour}\t${s.minute}\t${s.touched}\t${s.records}\t${nowMs}\n`,
    ),
  );
}

/** A marked (account, meter, hour, minute) of the work list, with the last second it was marked in. */
export interface Touch {
  accountId: string;
  meterId: string;
  hour: number;
  minute: number;
  lastSecond: number;
}

/** What was marked in seconds ≥ `fromSecond`. */
export async function touchedSince(
  ch: ClickHouseClient,
  database: string,
  fromSecond: number,
  local = '',
): Promise<Touch[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, hour AS h, minute AS n, max(second) AS s FROM ${database}.${TOUCHES_TABLE}${local}
      WHERE second >= ${Math.floor(fromSecond)} GROUP BY account_id, meter_id, hour, minute`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ a: string; m: string; h: string; n: string; s: string }>()).map((x) => ({
    accountId: x.a,
    meterId: x.m,
    hour: Number(x.h),
    minute: Number(x.n),
    lastSecond: Number(x.s),
  }));
}

/** A condition selecting the hours marked in seconds ≥ `fromSecond` (for hourStates). */
export function touchedSinceSql(database: string, fromSecond: number, local = ''): string {
  return `(account_id, meter_id, hour) IN (SELECT account_id, meter_id, hour FROM ${database}.${TOUCHES_TABLE}${local} WHERE second >= ${Math.floor(fromSecond)})`;
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
