/**
 * Settled hours (issue 27; infra/migrations/clickhouse/370_usage_hour_settles.sql; docs/design.md §10).
 *
 * An insert no longer recomputes the closed hours it touches (each late batch cost its hours' every row: a
 * backfill was quadratic). Instead each insert MARKS every hour it touches before inserting its rows, and the
 * settler (services/roles/consumer/hour-settler.ts) recomputes a marked hour once it has been quiet for a moment,
 * or once its marked rows have doubled since its last recompute — so each row is recomputed a bounded number of
 * times, whatever the lateness. A recompute holds the accounts' settle locks exclusively (inserts hold them shared
 * from their marks to their rows), counts the marks, recomputes, and records the count as a SETTLE: every row
 * of a counted mark is in that recompute.
 *
 * Readers (shared/usage/read-sql.ts readPlan) take an hour from the rollups when it is settled — every mark
 * covered — and raw otherwise; so a read is exact at every moment, and as fast as the rollups once the hour
 * is quiet, the current hour included.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import type { TouchedByAccount } from './row-scan.js';
import { chString } from './sql.js';
import { tsvEscape } from './wire.js';

export const MARKS_TABLE = 'usage_hour_marks';
export const SETTLES_TABLE = 'usage_hour_settles';
export const TOUCHES_TABLE = 'usage_hour_touches';

/** Rows per (meter, hour) of an insert: account → meter → hour → rows. */
export type HourCounts = Map<string, Map<string, Map<number, number>>>;

/** Adds `from`'s counts into `into`. */
export function addHourCounts(into: HourCounts, from: TouchedByAccount): void {
  for (const [account, meters] of from) {
    let a = into.get(account);
    if (!a) into.set(account, (a = new Map()));
    for (const [meter, hours] of meters) {
      let m = a.get(meter);
      if (!m) a.set(meter, (m = new Map()));
      for (const [h, n] of hours) m.set(h, (m.get(h) ?? 0) + n);
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

/**
 * Marks every hour of `counts` as touched by one more insert (and the work list with `nowMs`'s second). Called
 * holding the accounts' settle locks shared, before the rows are inserted: a recompute that counts this mark
 * waits for the rows.
 */
export async function markHours(
  ch: ClickHouseClient,
  database: string,
  counts: HourCounts,
  nowMs: number,
  local = '',
): Promise<void> {
  const marks: string[] = [];
  const touches: string[] = [];
  const second = Math.floor(nowMs / 1000);
  for (const [account, meters] of counts) {
    const a = tsvEscape(account);
    for (const [meter, hours] of meters) {
      const m = tsvEscape(meter);
      for (const [hour, n] of hours) {
        marks.push(`${a}\t${m}\t${hour}\t1\t${n}\n`);
        touches.push(`${second}\t${a}\t${m}\t${hour}\n`);
      }
    }
  }
  // The work list first: a mark the settler can't find would leave its hour raw until the next touch.
  await insertTsv(ch, `${database}.${TOUCHES_TABLE}${local}`, ['second', 'account_id', 'meter_id', 'hour'], touches);
  await insertTsv(
    ch,
    `${database}.${MARKS_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'touched', 'records'],
    marks,
  );
}

/** One (account, meter, hour): its marks and its latest settle. */
export interface HourState {
  accountId: string;
  meterId: string;
  hour: number;
  touched: number;
  records: number;
  settledTouched: number;
  settledRecords: number;
}

export const isSettled = (s: HourState) => s.touched <= s.settledTouched;

/** Marks and settles of the hours matching `where` (a condition on account_id, meter_id, hour). */
export async function hourStates(
  ch: ClickHouseClient,
  database: string,
  where: string,
  local = '',
): Promise<HourState[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, hour AS h, sum(t) AS t, sum(r) AS r, max(st) AS st, max(sr) AS sr FROM (
        SELECT account_id, meter_id, hour, touched AS t, records AS r, toUInt64(0) AS st, toUInt64(0) AS sr
        FROM ${database}.${MARKS_TABLE}${local} WHERE ${where}
        UNION ALL
        SELECT account_id, meter_id, hour, toUInt64(0), toUInt64(0), touched, records
        FROM ${database}.${SETTLES_TABLE}${local} WHERE ${where}
      ) GROUP BY account_id, meter_id, hour`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ a: string; m: string; h: string; t: string; r: string; st: string; sr: string }>()).map(
    (x) => ({
      accountId: x.a,
      meterId: x.m,
      hour: Number(x.h),
      touched: Number(x.t),
      records: Number(x.r),
      settledTouched: Number(x.st),
      settledRecords: Number(x.sr),
    }),
  );
}

/** Records that the marks of `states` (as counted under the exclusive locks) are covered by a recompute. */
export async function writeSettles(
  ch: ClickHouseClient,
  database: string,
  states: readonly HourState[],
  nowMs: number,
  local = '',
): Promise<void> {
  await insertTsv(
    ch,
    `${database}.${SETTLES_TABLE}${local}`,
    ['account_id', 'meter_id', 'hour', 'touched', 'records', 'settled_ms'],
    states.map(
      (s) => `${tsvEscape(s.accountId)}\t${tsvEscape(s.meterId)}\t${s.hour}\t${s.touched}\t${s.records}\t${nowMs}\n`,
    ),
  );
}

/** The (account, meter, hour) triples marked in seconds ≥ `fromSecond`, with the last second each was marked in. */
export async function touchedSince(
  ch: ClickHouseClient,
  database: string,
  fromSecond: number,
  local = '',
): Promise<{ accountId: string; meterId: string; hour: number; lastSecond: number }[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, hour AS h, max(second) AS s FROM ${database}.${TOUCHES_TABLE}${local}
      WHERE second >= ${Math.floor(fromSecond)} GROUP BY account_id, meter_id, hour`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ a: string; m: string; h: string; s: string }>()).map((x) => ({
    accountId: x.a,
    meterId: x.m,
    hour: Number(x.h),
    lastSecond: Number(x.s),
  }));
}

/** A condition selecting the given hours of the given meters (for hourStates). */
export function hoursOfSql(keys: readonly { accountId: string; meterId: string; hours: Iterable<number> }[]): string {
  return (
    keys
      .map(
        (k) =>
          `(account_id = ${chString(k.accountId)} AND meter_id = ${chString(k.meterId)} AND hour IN (${[...k.hours].join(', ')}))`,
      )
      .join(' OR ') || '0'
  );
}
