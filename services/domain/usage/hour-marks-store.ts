/**
 * The SQL of settled hours (hour-marks.ts: the rules and the states): writing marks, settles and the work list,
 * and reading them back.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { tsvEscape } from '../../../shared/usage/wire.js';
import {
  MARKS_TABLE,
  marksOf,
  SETTLES_TABLE,
  sliceOf,
  statesOf,
  TOUCHES_TABLE,
  wholeHourMarks,
  type HourState,
  type Mark,
  type SecondCounts,
  type Settle,
  type Touch,
} from './hour-marks.js';

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

/**
 * Marks what `counts` touches as touched by one more insert (and the work list with `nowMs`'s second). Called
 * holding the meters' settle locks shared, before the rows are inserted: a recompute that counts this mark
 * waits for the rows.
 */
export async function markHours(
  ch: ClickHouseClient,
  database: string,
  counts: SecondCounts,
  nowMs: number,
  local = '',
): Promise<Mark[]> {
  const marks = marksOf(counts, nowMs);
  await writeMarks(ch, database, marks, nowMs, local);
  return marks;
}

/**
 * Records that the insert whose `marks` markHours wrote has written its partials (./partials.ts): for each of
 * its second marks a row adding 1 to `partial` and nothing to `touched`, summed with the mark. Written after the
 * partials, so a second counts as having partials only once they are stored: until then — an insert in flight,
 * or one whose partials failed and waits for its redelivery — readers take the second raw.
 */
export async function markPartials(
  ch: ClickHouseClient,
  database: string,
  marks: readonly Mark[],
  local = '',
): Promise<void> {
  await insertTsv(
    ch,
    `${database}.${MARKS_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'minute', 'touched', 'records', 'partial'],
    marks.filter((m) => sliceOf(m.hour, m.minute) === 'second').map((m) => `${markKey(m)}\t0\t0\t1\n`),
  );
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
  return writeMarks(ch, database, wholeHourMarks(accountId, meterId, hours), nowMs, local);
}

/** A mark's key columns as TabSeparated text: account_id, meter_id, hour, minute. */
const markKey = (m: Mark) => `${tsvEscape(m.accountId)}\t${tsvEscape(m.meterId)}\t${m.hour}\t${m.minute}`;

async function writeMarks(
  ch: ClickHouseClient,
  database: string,
  marks: readonly Mark[],
  nowMs: number,
  local: string,
): Promise<void> {
  const second = Math.floor(nowMs / 1000);
  // The work list first: a mark the settler can't find would leave its hour raw until the next touch.
  await insertTsv(
    ch,
    `${database}.${TOUCHES_TABLE}${local}`,
    ['second', 'account_id', 'meter_id', 'hour', 'minute'],
    marks.filter((m) => m.listed).map((m) => `${second}\t${markKey(m)}\n`),
  );
  await insertTsv(
    ch,
    `${database}.${MARKS_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'minute', 'touched', 'records'],
    marks.map((m) => `${markKey(m)}\t1\t${m.records}\n`),
  );
}

/** Marks and settles of the hours matching `where` (a condition on account_id, meter_id, hour). */
export async function hourStates(
  ch: ClickHouseClient,
  database: string,
  where: string,
  local = '',
): Promise<HourState[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, hour AS h, minute AS n, sum(t) AS t, sum(r) AS r, max(st) AS st, max(sr) AS sr, sum(p) AS p FROM (
        SELECT account_id, meter_id, hour, minute, touched AS t, records AS r, toUInt64(0) AS st, toUInt64(0) AS sr, partial AS p
        FROM ${database}.${MARKS_TABLE}${local} WHERE ${where}
        UNION ALL
        SELECT account_id, meter_id, hour, minute, toUInt64(0), toUInt64(0), touched, records, toUInt64(0)
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
    p: string;
  }>();
  return statesOf(
    rows.map((x) => ({ ...x, h: Number(x.h), n: Number(x.n), t: Number(x.t), st: Number(x.st), p: Number(x.p) })),
  );
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
