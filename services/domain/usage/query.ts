import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import type { MeterType } from '../../../shared/meters/record.js';
import { chString } from './rollups-store.js';
import type { WindowStats } from './stats.js';
import { ValidationError } from '../../../shared/errors.js';
import { MAX_GROUPS } from '../../../shared/usage/limits.js';
import { windowKeySql, windowsOf, type UsageWindow } from '../../../shared/usage/windows.js';
import { meterPairKey, readableUniqueStates } from './unique-rollups-store.js';
import { groupColumns, mergedSql, readPlan, type ReadPlan, type ReadSlice, type UsageSlice } from './read-sql.js';
import { planHours, watermark } from './read-plan.js';
export { watermark };

export { PERCENTILES, type WindowStats } from './stats.js';
export { chString } from './rollups-store.js';
export { MAX_GROUPS };
export { readPlan, type ReadPlan, type UsageSlice } from './read-sql.js';

export interface UsageQuery extends UsageSlice {
  accountId: string;
  meterId: string;
  /**
   * A deployment meter's usage is kept per customer account (operator mode): the accounts read — every one
   * ('all', an operator's read) or these. Absent: `accountId`'s usage.
   */
  accounts?: 'all' | readonly string[];
  type: MeterType;
  startMs: number;
  endMs: number;
  window: UsageWindow;
  /**
   * The caller saw no correction of the meter in the Postgres correction log, read before this query (a
   * correction is logged there before ClickHouse holds any of its cancellations): raw rows are read without
   * the cancelled-records lookup. Absent: the lookup is made.
   */
  neverCorrected?: boolean;
}

/** Bounds of an API read (`USAGE_QUERY_MAX_EXECUTION_SECONDS`): ClickHouse stops a query past them. */
export interface UsageReadLimits {
  maxExecutionSeconds?: number;
}

const settingsOf = (limits: UsageReadLimits) =>
  limits.maxExecutionSeconds ? { max_execution_time: limits.maxExecutionSeconds } : undefined;

/** One meter's usage over [startMs, endMs) as a single total (billing's period quantities), and by group with groupBy. */
export type UsageTotalsRequest = Omit<UsageQuery, 'window'>;

/** One group's total over a totals request's range: its dimension values (parallel to groupBy, '' = absent). */
export interface GroupTotals {
  values: string[];
  total: WindowStats;
}

/** A totals answer: the whole range, and its groups when the request had groupBy. */
export interface UsageTotals extends WindowStats {
  groups?: GroupTotals[];
}

/** One group of a group-by read: its dimension values (parallel to groupBy, '' = absent), every window. */
export interface GroupUsage {
  values: string[];
  windows: WindowStats[];
  total: WindowStats;
}

export interface UsageResult {
  windows: WindowStats[];
  total: WindowStats;
  /** Present when the query had groupBy; sorted by values. */
  groups?: GroupUsage[];
}

/** Group × window values one answer may hold (a year of hours for 100 groups is 876,000: refused). */
export const MAX_GROUP_WINDOWS = 100_000;

async function rowsOf(
  ch: ClickHouseClient,
  query: string,
  limits: UsageReadLimits,
  settings: ClickHouseSettings = {},
): Promise<Row[]> {
  const rs = await ch.query({ query, format: 'JSON', clickhouse_settings: { ...settingsOf(limits), ...settings } });
  return ((await rs.json()) as unknown as { data: Row[] }).data;
}

export class TooManyGroupsError extends ValidationError {
  constructor() {
    super(
      [
        {
          field: 'group_by',
          message: `the answer would have more than ${MAX_GROUPS} groups; add filter[...] or group by fewer dimensions`,
        },
      ],
      `More than ${MAX_GROUPS} groups.`,
      'too_many_groups',
    );
  }
}

export interface Row {
  a?: string;
  m?: string;
  w?: string | number;
  c: string | number;
  s: string;
  mn?: string;
  mx?: string;
  last?: string;
  q?: number[];
  uq?: string | number;
  /** A `cube` read's keys: `bw` 1 — the window `wk`, 0 — every window; `bg` 1 — the group `k0, k1, …`, 0 — every group. */
  bw?: number;
  wk?: string | number;
  bg?: number;
  [groupValue: `k${number}`]: string;
  [group: `g${number}`]: string;
}

/** Meters per totals query: keeps the SQL text (18.16 has no query parameters) well under max_query_size. */
const TOTALS_CHUNK = 500;

/**
 * Whether each request's unique count may come from per-hour distinct sets: a counter counting distinct
 * values of a dimension it neither filters nor groups by (those need rows per value), registered for sets.
 */
async function withUniqueStates<Q extends UsageTotalsRequest>(
  ch: ClickHouseClient,
  database: string,
  requests: readonly Q[],
): Promise<(Q & ReadSlice)[]> {
  const eligible = (q: Q) =>
    q.type === 'counter' && q.uniqueBy !== undefined && !q.filters?.has(q.uniqueBy) && !q.groupBy?.includes(q.uniqueBy);
  const candidates = requests
    .filter(eligible)
    .map((q) => ({ accountId: q.accountId, meterId: q.meterId, uniqueBy: q.uniqueBy! }));
  const readable = candidates.length ? await readableUniqueStates(ch, database, candidates) : new Set<string>();
  return requests.map((q) => ({ ...q, uniqueStates: eligible(q) && readable.has(meterPairKey(q)) }));
}

/**
 * Usage of one meter over [startMs, endMs) by window, every window present (empty ones with count 0),
 * plus the whole range, in one SELECT costing O(windows) rollup rows plus the unswept hours' raw rows.
 * Window `none` is answered by queryUsageTotals, the same code billing uses.
 */
export async function queryUsage(
  ch: ClickHouseClient,
  database: string,
  query: UsageQuery,
  limits: UsageReadLimits = {},
): Promise<UsageResult> {
  if (query.groupBy?.length) return queryGroupedUsage(ch, database, query, limits);
  if (query.window === 'none' && query.accounts !== undefined) {
    // The totals path reads (account, meter) pairs; this one reads a meter across accounts, in one SELECT.
    const [[q], swept, hours] = await Promise.all([
      withUniqueStates(ch, database, [query]),
      watermark(ch, database),
      planHours(ch, database, meterSql(query), query.startMs, query.endMs),
    ]);
    const plan = readPlan(query.startMs, query.endMs, swept, hours);
    const sql = mergedSql(database, query.type, meterSql(query), plan, () => '', '', undefined, q);
    const total = stats(query.startMs, query.endMs, (await rowsOf(ch, sql, limits))[0]);
    return { windows: [total], total };
  }
  if (query.window === 'none') {
    const [total] = await queryUsageTotals(ch, database, [query], limits);
    return { windows: [total!], total: total! };
  }
  const [[q], swept, hours] = await Promise.all([
    withUniqueStates(ch, database, [query]),
    watermark(ch, database),
    planHours(ch, database, meterSql(query), query.startMs, query.endMs),
  ]);
  const plan = readPlan(query.startMs, query.endMs, swept, hours);
  const window = query.window;
  const sql = mergedSql(
    database,
    query.type,
    meterSql(query),
    plan,
    (ts) => `${windowKeySql(window, ts)} AS w`,
    'w',
    'totals',
    q,
  );
  const rs = await ch.query({ query: sql, format: 'JSON', clickhouse_settings: settingsOf(limits) });
  const json = (await rs.json()) as unknown as { data: Row[]; totals?: Row };
  const byKey = new Map<number, Row>();
  for (const r of json.data) byKey.set(Number(r.w), r);
  const windows = windowsOf(window, query.startMs, query.endMs).map((w) => stats(w.start, w.end, byKey.get(w.key)));
  const totalRow = json.totals && Number(json.totals.c) > 0 ? json.totals : undefined;
  return { windows, total: stats(query.startMs, query.endMs, totalRow) };
}

function meterSql(q: { accountId: string; meterId: string; accounts?: 'all' | readonly string[] }): string {
  const meter = `meter_id = ${chString(q.meterId)}`;
  if (q.accounts === undefined) return `account_id = ${chString(q.accountId)} AND ${meter}`;
  if (q.accounts === 'all') return meter;
  // No account at all (a filter naming no known customer): a condition nothing matches.
  const list = q.accounts.length ? q.accounts.map(chString).join(', ') : "''";
  return `account_id IN (${list}) AND ${meter}`;
}

/**
 * A group-by read: every group (at most MAX_GROUPS, else TooManyGroupsError) with every window (zero-filled)
 * and its total, and the overall windows and total (the same read without groupBy), from ONE SELECT over the
 * plan (`cube`): O(windows × groups) rollup rows plus the unswept hours' raw rows, one round trip.
 * ClickHouse stops the query once its keys pass what a legal answer can hold; then
 * refusedGroups says why (or, when the cells were a raw part's per-unique-value rows, the query runs unbounded).
 */
async function queryGroupedUsage(
  ch: ClickHouseClient,
  database: string,
  query: UsageQuery,
  limits: UsageReadLimits,
): Promise<UsageResult> {
  const [[planned], swept, hours] = await Promise.all([
    withUniqueStates(ch, database, [query]),
    watermark(ch, database),
    planHours(ch, database, meterSql(query), query.startMs, query.endMs),
  ]);
  const q = planned!;
  const plan = readPlan(q.startMs, q.endMs, swept, hours);
  const window = q.window;
  const windowed = window !== 'none';
  const spans = windowsOf(window, q.startMs, q.endMs);
  const sql = mergedSql(
    database,
    q.type,
    meterSql(q),
    plan,
    windowed ? (ts) => `${windowKeySql(window, ts)} AS w` : () => '',
    windowed ? 'w' : '',
    'cube',
    q,
  );
  // Keys of a legal answer: its cells, group totals, window totals and the whole range.
  const maxGroups = Math.min(MAX_GROUPS, Math.floor(MAX_GROUP_WINDOWS / spans.length));
  const maxKeys = windowed ? (maxGroups + 1) * (spans.length + 1) : maxGroups + 1;
  const bounded = { max_rows_to_group_by: String(maxKeys), group_by_overflow_mode: 'throw' } as ClickHouseSettings;
  const rows = await rowsOf(ch, sql, limits, bounded).catch(async (err: Error) => {
    if (!/Limit for rows to GROUP BY exceeded/.test(err.message)) throw err;
    refusedGroups(await rowsOf(ch, groupTotalsSql(database, q, plan), limits), spans.length);
    return rowsOf(ch, sql, limits);
  });
  const overall = new Map<number, Row>();
  const groups: { total: Row; cells: Map<number, Row> }[] = [];
  for (const r of rows) {
    const inWindow = Number(r.bw) === 1;
    if (Number(r.bg) === 0) overall.set(inWindow ? Number(r.wk) : NaN, r);
    else if (!inWindow) groups.push({ total: r, cells: new Map() });
    else groups[groups.length - 1]!.cells.set(Number(r.wk), r);
  }
  refusedGroups(groups, spans.length);
  const windowsFrom = (total: WindowStats, cells: Map<number, Row>) =>
    windowed ? spans.map((w) => stats(w.start, w.end, cells.get(w.key))) : [total];
  const total = stats(q.startMs, q.endMs, overall.get(NaN));
  return {
    windows: windowsFrom(total, overall),
    total,
    groups: groups.map(({ total: r, cells }): GroupUsage => {
      const groupTotal = stats(q.startMs, q.endMs, r);
      return {
        values: groupColumns(q).map((_, i) => r[`k${i}`] ?? ''),
        windows: windowsFrom(groupTotal, cells),
        total: groupTotal,
      };
    }),
  };
}

/** The group totals of a group-by read, at most MAX_GROUPS + 1 of them: enough to tell why an answer is refused. */
function groupTotalsSql(database: string, q: UsageQuery & ReadSlice, plan: ReadPlan): string {
  return `${mergedSql(database, q.type, meterSql(q), plan, () => '', '', undefined, q)} ORDER BY ${groupColumns(q).join(', ')} LIMIT ${MAX_GROUPS + 1}`;
}

/** Throws when an answer of `groups` groups × `windows` windows is more than a read may hold. */
function refusedGroups(groups: readonly unknown[], windows: number): void {
  if (groups.length > MAX_GROUPS) throw new TooManyGroupsError();
  if (groups.length * windows > MAX_GROUP_WINDOWS) {
    throw new ValidationError(
      [
        {
          field: 'window',
          message: `${groups.length} groups × ${windows} windows is more than ${MAX_GROUP_WINDOWS} values; choose a larger window or a shorter range`,
        },
      ],
      undefined,
      'too_many_groups',
    );
  }
}

/**
 * Totals of many meters at once, in request order, with the dedup of `GET …/usage?window=none` (it calls
 * this). One query per distinct (range, meter type) and at most TOTALS_CHUNK meters, filtered with
 * `(account_id, meter_id) IN (…)` on the tables' key prefix: a billing run over thousands of meters of one
 * period costs a handful of queries. A request with `groupBy` (billing per group, issue 18) also gets its
 * groups' totals, sorted by values — every group, never capped: each is a line of an invoice — from one more
 * query per distinct (range, meter type, group keys).
 */
export async function queryUsageTotals(
  ch: ClickHouseClient,
  database: string,
  requests: readonly UsageTotalsRequest[],
  limits: UsageReadLimits = {},
): Promise<UsageTotals[]> {
  const [swept, planned] = requests.length
    ? await Promise.all([watermark(ch, database), withUniqueStates(ch, database, requests)])
    : [undefined, []];
  const out: UsageTotals[] = new Array(requests.length);
  await eachTotalsChunk(ch, database, planned, swept, limits, false, (req, index, rows) => {
    out[index] = stats(req.startMs, req.endMs, rows?.[0]);
  });
  await eachTotalsChunk(ch, database, planned, swept, limits, true, (req, index, rows) => {
    const cols = groupColumns(req);
    const groups = (rows ?? []).map(
      (r): GroupTotals => ({
        values: cols.map((c) => r[c as `g${number}`] ?? ''),
        total: stats(req.startMs, req.endMs, r),
      }),
    );
    out[index]!.groups = groups.sort((x, y) => compareValues(x.values, y.values));
  });
  return out;
}

/**
 * Every account's totals of deployment meters over [startMs, endMs) — each customer's usage of them — with the
 * dedup of queryUsageTotals, one query per TOTALS_CHUNK meters: `meter → account → totals`, only accounts with
 * records. (queryUsageTotals reads listed (account, meter) pairs; this reads every account of a meter.)
 */
export async function queryUsageTotalsByAccount(
  ch: ClickHouseClient,
  database: string,
  request: { meterIds: readonly string[]; type: MeterType; startMs: number; endMs: number },
  limits: UsageReadLimits = {},
): Promise<Map<string, Map<string, WindowStats>>> {
  const out = new Map<string, Map<string, WindowStats>>();
  if (request.meterIds.length === 0) return out;
  const swept = await watermark(ch, database);
  for (let i = 0; i < request.meterIds.length; i += TOTALS_CHUNK) {
    const meters = `meter_id IN (${request.meterIds
      .slice(i, i + TOTALS_CHUNK)
      .map(chString)
      .join(', ')})`;
    const hours = await planHours(ch, database, meters, request.startMs, request.endMs);
    const plan = readPlan(request.startMs, request.endMs, swept, hours);
    const sql = mergedSql(
      database,
      request.type,
      meters,
      plan,
      () => 'account_id AS a, meter_id AS m',
      'a, m',
      undefined,
    );
    for (const r of await rowsOf(ch, sql, limits)) {
      let byAccount = out.get(r.m!);
      if (!byAccount) out.set(r.m!, (byAccount = new Map()));
      byAccount.set(r.a!, stats(request.startMs, request.endMs, r));
    }
  }
  return out;
}

const compareValues = (x: readonly string[], y: readonly string[]) => {
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return 0;
};

/**
 * The totals queries of `requests` (grouped: only those with groupBy, split by it), a chunk of meters at a
 * time; `each` gets every request with its rows (one row per group, or the single total row; undefined: none).
 */
async function eachTotalsChunk(
  ch: ClickHouseClient,
  database: string,
  requests: readonly (UsageTotalsRequest & ReadSlice)[],
  swept: number | undefined,
  limits: UsageReadLimits,
  grouped: boolean,
  each: (req: UsageTotalsRequest, index: number, rows: Row[] | undefined) => void,
): Promise<void> {
  const chunks = new Map<string, { req: UsageTotalsRequest & ReadSlice; index: number }[]>();
  requests.forEach((req, index) => {
    if (grouped && !req.groupBy?.length) return;
    const key = `${Math.trunc(req.startMs)}:${Math.trunc(req.endMs)}:${req.type}:${sliceKey(req)}:${grouped ? JSON.stringify(req.groupBy) : ''}`;
    let g = chunks.get(key);
    if (!g) chunks.set(key, (g = []));
    g.push({ req, index });
  });
  const pairKey = (a: string, m: string) => `${a}\u0000${m}`;
  for (const group of chunks.values()) {
    for (let i = 0; i < group.length; i += TOTALS_CHUNK) {
      const chunk = group.slice(i, i + TOTALS_CHUNK);
      const { startMs, endMs, type, filters, uniqueBy, groupBy, uniqueStates, neverCorrected } = chunk[0]!.req;
      const pairs = [...new Set(chunk.map(({ req }) => `(${chString(req.accountId)}, ${chString(req.meterId)})`))];
      const meters = `(account_id, meter_id) IN (${pairs.join(', ')})`;
      const slice = { filters, uniqueBy, groupBy: grouped ? groupBy : undefined, uniqueStates, neverCorrected };
      const hours = await planHours(ch, database, meters, startMs, endMs);
      const rows = await rowsOf(
        ch,
        mergedSql(
          database,
          type,
          meters,
          readPlan(startMs, endMs, swept, hours),
          () => 'account_id AS a, meter_id AS m',
          'a, m',
          undefined,
          slice,
        ),
        limits,
      );
      const byPair = new Map<string, Row[]>();
      for (const r of rows) {
        const k = pairKey(r.a!, r.m!);
        const list = byPair.get(k);
        if (list) list.push(r);
        else byPair.set(k, [r]);
      }
      for (const { req, index } of chunk) each(req, index, byPair.get(pairKey(req.accountId, req.meterId)));
    }
  }
}

/** Requests that can share one totals query have the same slice and read it the same way. */
function sliceKey(s: ReadSlice): string {
  return JSON.stringify([
    s.uniqueBy ?? null,
    [...(s.filters ?? [])],
    Boolean(s.uniqueStates),
    Boolean(s.neverCorrected),
  ]);
}

/** A result row of mergedSql as a window's stats (an absent or empty row: count 0). */
export function stats(start: number, end: number, r: Row | undefined): WindowStats {
  if (!r || Number(r.c) === 0) return { start, end, count: 0, sum: '0', ...(r?.uq !== undefined ? { unique: 0 } : {}) };
  const out: WindowStats = { start, end, count: Number(r.c), sum: r.s };
  if (r.uq !== undefined) out.unique = Number(r.uq);
  if (r.mn !== undefined) out.min = r.mn;
  if (r.mx !== undefined) out.max = r.mx;
  if (r.last !== undefined) out.last = r.last;
  if (r.q !== undefined) out.percentiles = r.q.map(Number);
  return out;
}
