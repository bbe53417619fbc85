/**
 * The SQL of usage reads (services/domain/usage/query.ts runs it): which part of a range comes from rollups and which
 * from raw rows, and the one SELECT merging both for a slice — by window, by group, or the whole data cube.
 */
import type { MeterType } from '../../../shared/meters/record.js';
import {
  HOUR_MS,
  MINUTE_MS,
  MINUTE_ROLLUP_TABLE,
  QUANTILES_MERGE,
  QUANTILES_STATE,
  ROLLUP_TABLE,
  SECOND_MS,
  SECOND_ROLLUP_TABLE,
} from './rollups-store.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';
import { dimensionSql } from '../../../shared/usage/dimensions.js';
import { notCancelledSql } from './cancellations-store.js';
import { chString } from './sql.js';
import { rollupRangesSql, withoutMinutes, withoutPartials, type ReadPlan } from './read-plan.js';
import { PARTIALS_TABLE } from './partials.js';
export { readPlan, type ReadPlan } from './read-plan.js';
import { UNIQUE_ROLLUP_TABLE, UNIQUES_MERGE, UNIQUES_STATE } from './unique-rollups-store.js';

/**
 * Which records of a meter a read counts and how it splits them (issue 18): `filters` keep records whose
 * dimension is one of the listed values (several keys: all must match); `uniqueBy` adds the exact number of
 * distinct values of that dimension (records without it don't count); `groupBy` splits the answer by the
 * values of those dimensions (an absent dimension is its own group, value '').
 */
export interface UsageSlice {
  filters?: ReadonlyMap<string, readonly string[]>;
  uniqueBy?: string;
  groupBy?: readonly string[];
}

/**
 * How one SELECT reads a slice: `uniqueStates` — the unique count comes from per-hour distinct sets
 * (services/domain/usage/unique-rollups-store.ts) rather than from rollup rows per unique value; `neverCorrected` as in UsageQuery.
 */
export interface ReadSlice extends UsageSlice {
  uniqueStates?: boolean;
  neverCorrected?: boolean;
}

/** The WHERE condition of a slice's filters (both tables carry dim_keys/dim_values). */
export function filterSql(slice: UsageSlice): string {
  let out = '';
  for (const [key, values] of slice.filters ?? [])
    out += ` AND ${dimensionSql(key)} IN (${values.map(chString).join(', ')})`;
  return out;
}

/**
 * A group-by key that is not a dimension: the row's account (an operator's `group_by=customer` on a deployment
 * meter, whose usage is kept per customer account). Never a valid dimension key, so never confused with one.
 */
export const ACCOUNT_GROUP = '@account';

/** The expression a group-by key reads: a dimension's value, or the account. */
function groupKeySql(key: string): string {
  return key === ACCOUNT_GROUP ? 'account_id' : dimensionSql(key);
}

/** `g0, g1, …`: the result columns of the group-by dimensions. */
export function groupColumns(slice: UsageSlice): string[] {
  return (slice.groupBy ?? []).map((_, i) => `g${i}`);
}

/**
 * One SELECT merging rollup rows and raw rows of the same plan: the inner parts produce the same columns
 * (raw rows are turned into rollup-shaped partial aggregates, quantiles as t-digest states), the outer
 * GROUP BY merges them per key. `meters` filters account_id/meter_id; `key` names the result key columns
 * as computed from an epoch-ms expression; the slice adds its filters, group columns and the unique
 * dimension (rollup rows are per dimension set, so a distinct count over them is exact and mergeable).
 */
export function mergedSql(
  database: string,
  type: MeterType,
  meters: string,
  plan: ReadPlan,
  key: (ts: string) => string,
  outerKey: string,
  finish: Finish,
  slice: ReadSlice = {},
): string {
  if (slice.uniqueStates && slice.uniqueBy)
    return uniqueStatesSql(database, meters, plan, key, outerKey, finish, slice, slice.uniqueBy);
  const gauge = type === 'gauge';
  const histogram = type === 'histogram';
  const extremes = type !== 'counter';
  // Partials carry no t-digest, and know nothing of a correction's cancellations: such reads take those seconds raw.
  if (histogram || !slice.neverCorrected) plan = withoutPartials(plan);
  const groups = (slice.groupBy ?? []).map((k, i) => `${groupKeySql(k)} AS g${i}`);
  const unique = slice.uniqueBy ? `${dimensionSql(slice.uniqueBy)} AS u` : undefined;
  const where = `${meters}${filterSql(slice)}`;
  const parts: string[] = [];
  const rollups: [string, string, number, [number, number][]][] = [
    [ROLLUP_TABLE, 'hour', HOUR_MS, plan.rollupHours],
    [MINUTE_ROLLUP_TABLE, 'minute', MINUTE_MS, plan.rollupMinutes ?? []],
    [SECOND_ROLLUP_TABLE, 'second', SECOND_MS, plan.rollupSeconds ?? []],
    [PARTIALS_TABLE, 'second', SECOND_MS, plan.partialSeconds ?? []],
  ];
  for (const [table, column, unitMs, ranges] of rollups) {
    if (!ranges.length) continue;
    const cols = [key(`${column} * ${unitMs}`), ...groups, 'records AS c', 'sum AS s'].filter(Boolean);
    if (unique) cols.push(unique);
    if (extremes) cols.push('min AS mn', 'max AS mx');
    if (gauge) cols.push('last_ts AS lt', 'last_id AS li', 'last_value AS lv');
    if (histogram) cols.push('quantiles AS qs');
    // records = 0: a dimension set whose every record was cancelled (recomputeHours).
    parts.push(`SELECT ${cols.join(', ')} FROM ${database}.${table} FINAL
      WHERE ${where} AND ${rollupRangesSql(ranges, column)} AND records > 0`);
  }
  if (plan.rawRanges.length) {
    const cols = [key('ts_ms'), ...groups, 'count() AS c', 'sum(value) AS s'].filter(Boolean);
    if (unique) cols.push(unique);
    if (extremes) cols.push('min(value) AS mn', 'max(value) AS mx');
    if (gauge)
      cols.push(
        'max(ts_ms) AS lt',
        'argMax(record_id, (ts_ms, record_id)) AS li',
        'argMax(value, (ts_ms, record_id)) AS lv',
      );
    if (histogram) cols.push(`${QUANTILES_STATE}(toFloat64(value)) AS qs`);
    const rawKey = [outerKey, ...groupColumns(slice), ...(unique ? ['u'] : [])].filter(Boolean).join(', ');
    parts.push(
      `SELECT ${cols.join(', ')} FROM ${database}.${USAGE_TABLE} FINAL WHERE ${where} AND ${rawRangesSql(database, meters, plan, slice)}${rawKey ? ` GROUP BY ${rawKey}` : ''}`,
    );
  }
  const out = [simple('c', 'sum'), simple('s', 'sum', true)];
  if (unique) out.push(stateful('uq', 'uniqExactIf', "u, u != ''"));
  if (extremes) out.push(simple('mn', 'min', true), simple('mx', 'max', true));
  if (gauge) out.push(stateful('last', 'argMax', 'lv, (lt, li)', true));
  if (histogram) out.push(stateful('q', QUANTILES_MERGE, 'qs'));
  return outerSql(parts, outerKey, slice, out, finish);
}

/**
 * One answer column merged from the parts' partial rows: `merge` does it in one step. A cube read does it in
 * two: `partial` merges a (window, group) cell's rows into the same aggregate's state (or the same sum, min,
 * max), `finish` merges the cells' column `name`.
 */
export interface OuterAggregate {
  name: string;
  merge: string;
  partial: string;
  finish: string;
}

/** sum, min or max of the parts' column `name` (as text: toString, exact decimals). */
function simple(name: string, fn: string, text = false): OuterAggregate {
  const merged = `${fn}(${name})`;
  const shown = text ? `toString(${merged})` : merged;
  return { name, merge: shown, partial: merged, finish: shown };
}

/** An aggregate `fn` (possibly parametric, possibly a -Merge) of `args`, its cells kept as -State. */
function stateful(name: string, fn: string, args: string, text = false): OuterAggregate {
  const at = fn.indexOf('(');
  const [base, params] = at < 0 ? [fn, ''] : [fn.slice(0, at), fn.slice(at)];
  const show = (e: string) => (text ? `toString(${e})` : e);
  return {
    name,
    merge: show(`${fn}(${args})`),
    partial: `${base}State${params}(${args})`,
    finish: show(`${base.endsWith('Merge') ? base : `${base}Merge`}${params}(${name})`),
  };
}

/**
 * How the outer GROUP BY of a read ends: `totals` adds the whole range (WITH TOTALS); `cube` answers a
 * group-by read at once — every (window, group) cell, each group's total, each window's total over the
 * groups and the whole range: the cells are merged first (states), then every cell is counted twice over by
 * two arrayJoins, under its window (`bw` = 1) and under every window (`bw` = 0, key 0), and likewise under
 * its group and every group (`bg`), and one GROUP BY merges them (the flags keep an absent dimension's ''
 * a group of its own). Sorted: the overall rows, then each group's total followed by its windows.
 * Not 18.16's WITH CUBE: it cubes each block of the aggregation's output on its own, and a two-level
 * aggregation (large states: 1 M distinct users) has many blocks — duplicated, partial totals.
 */
export type Finish = 'totals' | 'cube' | undefined;

/** The outer SELECT merging the inner parts' partial aggregates by `outerKey` and the slice's group columns. */
function outerSql(
  parts: readonly string[],
  outerKey: string,
  slice: UsageSlice,
  aggregates: readonly OuterAggregate[],
  finish: Finish,
): string {
  const from = `FROM (${parts.join(' UNION ALL ')})`;
  const groups = groupColumns(slice);
  if (finish === 'cube') {
    const cellKey = [outerKey, ...groups].filter(Boolean).join(', ');
    const cells = `SELECT ${[cellKey, ...aggregates.map((a) => `${a.partial} AS ${a.name}`)].join(', ')} ${from} GROUP BY ${cellKey}`;
    const groupKeys = groups.map((g, i) => `if(bg, ${g}, '') AS k${i}`);
    const byWindow = outerKey ? ['arrayJoin([1, 0]) AS bw', `if(bw, ${outerKey}, 0) AS wk`] : [];
    const keys = [...(outerKey ? ['bw', 'wk'] : []), 'bg', ...groups.map((_, i) => `k${i}`)];
    const ordered = ['bg', ...groups.map((_, i) => `k${i}`), ...(outerKey ? ['bw', 'wk'] : [])];
    // [0, 1], not [1, 0] again: ClickHouse would take two equal arrayJoin expressions for one (no cross product).
    const cols = [
      ...byWindow,
      'arrayJoin([0, 1]) AS bg',
      ...groupKeys,
      ...aggregates.map((a) => `${a.finish} AS ${a.name}`),
    ];
    return `SELECT ${cols.join(', ')} FROM (${cells}) GROUP BY ${keys.join(', ')} ORDER BY ${ordered.join(', ')}`;
  }
  const outKey = [outerKey, ...groups].filter(Boolean).join(', ');
  const cols = [outKey, ...aggregates.map((a) => `${a.merge} AS ${a.name}`)].filter(Boolean);
  return `SELECT ${cols.join(', ')} ${from}${outKey ? ` GROUP BY ${outKey}` : ''}${finish === 'totals' ? ' WITH TOTALS' : ''}`;
}

/** The raw part's time condition, and the cancelled-records lookup unless the slice's meters were never corrected. */
export function rawRangesSql(database: string, meters: string, plan: ReadPlan, slice: ReadSlice): string {
  const ranges = plan.rawRanges
    .map(([s, e]) => `(ts_ms >= ${Math.trunc(s)} AND ts_ms < ${Math.trunc(e)})`)
    .join(' OR ');
  return `(${ranges})${slice.neverCorrected ? '' : ` AND ${notCancelledSql(database, meters, { global: true })}`}`;
}

/**
 * mergedSql of a unique_count counter whose hours carry distinct sets: rollup rows are (hour, other
 * dimensions) with a uniqExact state, raw rows become the same state, the outer GROUP BY unions them per key.
 */
export function uniqueStatesSql(
  database: string,
  meters: string,
  plan: ReadPlan,
  key: (ts: string) => string,
  outerKey: string,
  finish: Finish,
  slice: ReadSlice,
  uniqueBy: string,
): string {
  // No distinct sets per minute: an hour read per minute is read raw here.
  plan = withoutMinutes(plan);
  const groups = (slice.groupBy ?? []).map((k, i) => `${groupKeySql(k)} AS g${i}`);
  const where = `${meters}${filterSql(slice)}`;
  const parts: string[] = [];
  if (plan.rollupHours.length) {
    const cols = [key(`hour * ${HOUR_MS}`), ...groups, 'records AS c', 'sum AS s', 'uniques AS us'].filter(Boolean);
    // The highest version of each row, as FINAL would pick it (equal versions hold equal sets), but without
    // FINAL's copy of every state: the filters run first (as PREWHERE) and only the winners' states are merged.
    const rowKey = 'account_id, meter_id, hour, group_key';
    parts.push(`SELECT ${cols.join(', ')} FROM (
        SELECT account_id, meter_id, hour, dim_keys, dim_values, records, sum, uniques FROM ${database}.${UNIQUE_ROLLUP_TABLE}
        WHERE ${where} AND ${rollupRangesSql(plan.rollupHours)}
        ORDER BY ${rowKey}, version DESC LIMIT 1 BY ${rowKey}
      ) WHERE records > 0`);
  }
  if (plan.rawRanges.length) {
    const cols = [
      key('ts_ms'),
      ...groups,
      'count() AS c',
      'sum(value) AS s',
      `${UNIQUES_STATE(uniqueBy)} AS us`,
    ].filter(Boolean);
    const rawKey = [outerKey, ...groupColumns(slice)].filter(Boolean).join(', ');
    parts.push(
      `SELECT ${cols.join(', ')} FROM ${database}.${USAGE_TABLE} FINAL WHERE ${where} AND ${rawRangesSql(database, meters, plan, slice)}${rawKey ? ` GROUP BY ${rawKey}` : ''}`,
    );
  }
  return outerSql(
    parts,
    outerKey,
    slice,
    [simple('c', 'sum'), simple('s', 'sum', true), stateful('uq', UNIQUES_MERGE, 'us')],
    finish,
  );
}
