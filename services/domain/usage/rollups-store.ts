/**
 * Hourly rollups of usage records (infra/migrations/clickhouse/310_usage_rollups.sql; docs/usage.md "Usage
 * rollups"). Writers: the settler recomputes hours inserts marked once they are quiet (services/domain/usage/hour-marks.ts),
 * the sweeper every (account, meter) of an hour once it has closed, corrections the hours they cancel records
 * of. Readers: services/domain/usage/query.ts.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { PERCENTILES } from './stats.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import { chString, groupKeySql, HOUR_MS } from './sql.js';
import { cancellationCount, cancelledSql, correctedMeters } from './cancellations-store.js';
export { chString, groupKeySql, HOUR_MS };
import { meterPairKey, uniqueKeysOf, uniqueRecomputeSql } from './unique-rollups-store.js';

export const ROLLUP_TABLE = 'usage_hourly';
/** Minute rollups of hours marked while open (services/domain/usage/hour-marks.ts): same columns, `minute` for `hour`. */
export const MINUTE_ROLLUP_TABLE = 'usage_minutely';
export const MINUTE_MS = 60_000;
/** Second rollups of a busy minute of an open hour (infra/migrations/clickhouse/390_usage_secondly.sql). */
export const SECOND_ROLLUP_TABLE = 'usage_secondly';
export const SECOND_MS = 1_000;
export const TOUCHED_TABLE = 'usage_hours_touched';
export const SWEEPS_TABLE = 'usage_rollup_sweeps';
/** The t-digest state type of `usage_hourly.quantiles`; raw rows are turned into the same state to merge. */
export const QUANTILES_STATE = `quantilesTDigestState(${PERCENTILES.join(', ')})`;
export const QUANTILES_MERGE = `quantilesTDigestMerge(${PERCENTILES.join(', ')})`;

/**
 * An hour is swept this long after it ended. Records of the last hour that keep arriving for a while after
 * it closes (buffering emitters, `timestamp = now − a minute`) are then rolled up once by the sweep rather
 * than recomputing a busy hour on every consumer batch; readers take the hour raw until then.
 */
export const SWEEP_AFTER_MS = 120_000;
/** The last hour the sweeper may roll up at `now`. */
export function sweepDueThrough(now: number): number {
  return Math.floor((now - SWEEP_AFTER_MS) / HOUR_MS) - 1;
}

/** One meter's hours to recompute. */
export interface HourKeys {
  accountId: string;
  meterId: string;
  hours: Iterable<number>;
}

/** Key ranges per INSERT … SELECT: keeps the statement small; each range is one index seek. */
const RANGES_PER_RECOMPUTE = 200;

/** Consecutive hours (or minutes) of one meter as [from, to) ranges. */
function hourRanges(hours: Iterable<number>): [number, number][] {
  const sorted = [...new Set(hours)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const h of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] === h) last[1] = h + 1;
    else out.push([h, h + 1]);
  }
  return out;
}

/** A rollup row's version per cancellation: above any count of records an hour of a meter can hold. */
const VERSION_PER_CANCELLATION = 2 ** 32;

/**
 * Recomputes the rollup rows of the given hours from their deduplicated raw rows and inserts them. Safe to
 * run any number of times, concurrently, in any order (see `version` in the migration): the answer is the
 * same as if each record had arrived once, on time. `local` ('_local' on a cluster) makes it read and write
 * one shard's local tables, on a replica of the shard owning the accounts (shared/clients/usage-shards.ts).
 *
 * Cancelled records (services/domain/usage/cancellations-store.ts) are left out. The rows of an hour are grouped by dimension
 * set *and* by whether they are cancelled: a set whose every record is cancelled gets a row with `records` = 0
 * (readers skip those), which replaces the set's earlier row. A snapshot's version is
 * cancellations × 2^32 + (2 × records + 1, or 0 for such an empty row): cancellations and records only ever
 * grow, so a later snapshot still wins, and of one snapshot's two rows of a set the one with records wins.
 * The count of cancellations is read (its own query) before the rows are, so it never claims more than they reflect.
 * Meters without any cancellation at that moment skip the per-row lookup (a cancellation landing later raises
 * the count, so the correction's own recompute outranks this snapshot).
 *
 * A unique_count meter registered for distinct sets (services/domain/usage/unique-rollups-store.ts) also gets its
 * usage_unique_hourly rows from the same raw rows, under the same version rule.
 */
export function recomputeHours(
  ch: ClickHouseClient,
  database: string,
  keys: readonly HourKeys[],
  local = '',
): Promise<void> {
  return recompute(ch, database, keys, local, HOURLY);
}

/**
 * recomputeHours for minutes (epoch minutes in `hours`) into usage_minutely: the minute rollups of an hour still
 * open (services/domain/usage/hour-marks.ts). No distinct sets: a unique count reads such an hour raw.
 */
export function recomputeMinutes(
  ch: ClickHouseClient,
  database: string,
  keys: readonly HourKeys[],
  local = '',
): Promise<void> {
  return recompute(ch, database, keys, local, MINUTELY);
}

/** recomputeMinutes for epoch seconds, into usage_secondly: the quiet seconds of a minute still busy. */
export function recomputeSeconds(
  ch: ClickHouseClient,
  database: string,
  keys: readonly HourKeys[],
  local = '',
): Promise<void> {
  return recompute(ch, database, keys, local, SECONDLY);
}

/** Where a recompute writes: the table, its time column and unit, and whether distinct sets go with it. */
interface Grain {
  table: string;
  column: 'hour' | 'minute' | 'second';
  unitMs: number;
  uniques: boolean;
}
const HOURLY: Grain = { table: ROLLUP_TABLE, column: 'hour', unitMs: HOUR_MS, uniques: true };
const MINUTELY: Grain = { table: MINUTE_ROLLUP_TABLE, column: 'minute', unitMs: MINUTE_MS, uniques: false };
const SECONDLY: Grain = { table: SECOND_ROLLUP_TABLE, column: 'second', unitMs: SECOND_MS, uniques: false };

async function recompute(
  ch: ClickHouseClient,
  database: string,
  keys: readonly HourKeys[],
  local: string,
  grain: Grain,
): Promise<void> {
  const ranges: { pair: string; sql: string }[] = [];
  for (const k of keys) {
    const meter = `account_id = ${chString(k.accountId)} AND meter_id = ${chString(k.meterId)}`;
    const pair = `(${chString(k.accountId)}, ${chString(k.meterId)})`;
    for (const [from, to] of hourRanges(k.hours))
      ranges.push({ pair, sql: `(${meter} AND ts_ms >= ${from * grain.unitMs} AND ts_ms < ${to * grain.unitMs})` });
  }
  if (ranges.length === 0) return;
  const pairsIn = (pairs: Iterable<string>) => `(account_id, meter_id) IN (${[...new Set(pairs)].join(', ')})`;
  // Registered before any of the meter's records existed (registerUniqueMeter): read once is enough.
  const uniqueKeys = grain.uniques
    ? await uniqueKeysOf(ch, database, pairsIn(ranges.map((r) => r.pair)), local)
    : new Map<string, string>();
  const uniqueKeyOf = new Map(
    keys.map((k) => [`(${chString(k.accountId)}, ${chString(k.meterId)})`, uniqueKeys.get(meterPairKey(k))]),
  );
  for (let i = 0; i < ranges.length; i += RANGES_PER_RECOMPUTE) {
    const chunk = ranges.slice(i, i + RANGES_PER_RECOMPUTE);
    const where = (rs: typeof chunk) => rs.map((r) => r.sql).join(' OR ');
    // The count first, then which meters have cancellations: a cancellation landing after the count is not
    // claimed by this snapshot's version, so the correction's own recompute outranks it either way.
    const cancellations = await cancellationCount(ch, database, local);
    const corrected = await correctedMeters(ch, database, pairsIn(chunk.map((r) => r.pair)), local);
    // A meter never corrected has nothing to leave out: no per-row lookup in the cancellations set.
    const cancelled = corrected.length ? cancelledSql(database, pairsIn(corrected), { local }) : '0';
    const version = (n: string, isCancelled: string) =>
      `${cancellations} * ${VERSION_PER_CANCELLATION} + if(${isCancelled}, 0, 2 * ${n} + 1)`;
    await ch.command({
      query: `INSERT INTO ${database}.${grain.table}${local}
        (account_id, meter_id, ${grain.column}, group_key, dim_keys, dim_values, records, sum, min, max, last_ts, last_id, last_value, quantiles, version)
        SELECT account_id, meter_id, ${grain.column}, group_key, dim_keys, dim_values, if(cancelled, toUInt64(0), n) AS records, s, mn, mx, lt, li, lv, qs,
          ${version('n', 'cancelled')} AS version
        FROM (
          SELECT account_id, meter_id, intDiv(ts_ms, ${grain.unitMs}) AS ${grain.column}, ${groupKeySql()} AS group_key, dim_keys, dim_values,
            ${cancelled} AS cancelled, count() AS n, sum(value) AS s, min(value) AS mn, max(value) AS mx, max(ts_ms) AS lt,
            argMax(record_id, (ts_ms, record_id)) AS li, argMax(value, (ts_ms, record_id)) AS lv, ${QUANTILES_STATE}(toFloat64(value)) AS qs
          FROM ${database}.${USAGE_TABLE}${local} FINAL
          WHERE ${where(chunk)}
          GROUP BY account_id, meter_id, ${grain.column}, dim_keys, dim_values, cancelled
        )`,
    });
    const byUniqueKey = new Map<string, typeof chunk>();
    for (const r of chunk) {
      const key = uniqueKeyOf.get(r.pair);
      if (key !== undefined) byUniqueKey.set(key, [...(byUniqueKey.get(key) ?? []), r]);
    }
    for (const [uniqueBy, rs] of byUniqueKey)
      await ch.command({ query: uniqueRecomputeSql(database, local, uniqueBy, where(rs), cancelled, version) });
  }
}

/** Every hour ≤ this one is rolled up for every meter; undefined before the first sweep. */
export async function sweptThrough(ch: ClickHouseClient, database: string): Promise<number | undefined> {
  const rs = await ch.query({
    query: `SELECT max(hour) AS h, count() AS n FROM ${database}.${SWEEPS_TABLE}`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ h: string; n: string }>();
  return row && Number(row.n) > 0 ? Number(row.h) : undefined;
}

export async function markSwept(ch: ClickHouseClient, database: string, hour: number): Promise<void> {
  await ch.insert({
    table: `${database}.${SWEEPS_TABLE}`,
    values: [{ hour, swept_ms: Date.now() }],
    format: 'JSONEachRow',
  });
}

/** (account, meter) pairs with records in `hour`, and the earliest hour anything was recorded in. */
export async function touchedMeters(
  ch: ClickHouseClient,
  database: string,
  hour: number,
  local = '',
): Promise<{ accountId: string; meterId: string }[]> {
  const rs = await ch.query({
    query: `SELECT DISTINCT account_id AS a, meter_id AS m FROM ${database}.${TOUCHED_TABLE}${local} WHERE hour = ${hour}`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ a: string; m: string }>()).map((r) => ({ accountId: r.a, meterId: r.m }));
}

export async function earliestTouchedHour(
  ch: ClickHouseClient,
  database: string,
  local = '',
): Promise<number | undefined> {
  const rs = await ch.query({
    query: `SELECT min(hour) AS h, count() AS n FROM ${database}.${TOUCHED_TABLE}${local}`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ h: string; n: string }>();
  return row && Number(row.n) > 0 ? Number(row.h) : undefined;
}

/** The hours (epoch hours) one meter has raw records in, on a shard (`local`). */
export async function recordedHours(
  ch: ClickHouseClient,
  database: string,
  m: { accountId: string; meterId: string },
  local = '',
): Promise<number[]> {
  const rs = await ch.query({
    query: `SELECT DISTINCT intDiv(ts_ms, ${HOUR_MS}) AS h FROM ${database}.${USAGE_TABLE}${local}
      WHERE account_id = ${chString(m.accountId)} AND meter_id = ${chString(m.meterId)}`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ h: string | number }>()).map((r) => Number(r.h));
}

/**
 * Rebuilds the rollups of every hour of one meter in [fromMs, toMs) — for records written straight into
 * ClickHouse (the bench's bulk load) rather than through the consumer.
 */
export async function rebuildRollups(
  ch: ClickHouseClient,
  database: string,
  accountId: string,
  meterId: string,
  fromMs: number,
  toMs: number,
): Promise<void> {
  const hours: number[] = [];
  for (let h = Math.floor(fromMs / HOUR_MS); h * HOUR_MS < toMs; h++) hours.push(h);
  await recomputeHours(ch, database, [{ accountId, meterId, hours }]);
}
