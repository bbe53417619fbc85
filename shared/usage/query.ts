import type { ClickHouseClient } from '@clickhouse/client';
import type { MeterType } from '../meters/record.js';
import { PERCENTILES, type WindowStats } from './stats.js';
import { USAGE_TABLE } from './wire.js';
import { windowKeySql, windowsOf, type UsageWindow } from './windows.js';

export { PERCENTILES, type WindowStats } from './stats.js';

export interface UsageQuery {
  accountId: string;
  meterId: string;
  type: MeterType;
  startMs: number;
  endMs: number;
  window: UsageWindow;
}

/** One meter's usage over [startMs, endMs) as a single total (billing's period quantities). */
export type UsageTotalsRequest = Omit<UsageQuery, 'window'>;

export interface UsageResult {
  windows: WindowStats[];
  total: WindowStats;
}

interface Row {
  a?: string;
  m?: string;
  w?: string | number;
  c: string | number;
  s: string;
  mn?: string;
  mx?: string;
  last?: string;
  q?: number[];
}

/** Meters per totals query: keeps the SQL text (18.16 has no query parameters) well under max_query_size. */
const TOTALS_CHUNK = 500;

/** A ClickHouse string literal (18.16 has no query parameters). */
export function chString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The aggregate columns a meter type needs, over raw rows. */
function statsColumns(type: MeterType): string[] {
  const cols = ['count() AS c', 'toString(sum(value)) AS s'];
  if (type !== 'counter') cols.push('toString(min(value)) AS mn', 'toString(max(value)) AS mx');
  if (type === 'gauge') cols.push('toString(argMax(value, (ts_ms, record_id))) AS last');
  if (type === 'histogram') cols.push(`quantilesTDigest(${PERCENTILES.join(', ')})(toFloat64(value)) AS q`);
  return cols;
}

/**
 * Usage of one meter over [startMs, endMs) by window, every window present (empty ones with count 0),
 * plus the whole range. Window `none` is answered by queryUsageTotals, the same code billing uses.
 * One scan: FINAL collapses rows sharing (account, meter, ts, record id) — client retries and
 * redeliveries — and WITH TOTALS aggregates the range in the same pass.
 */
export async function queryUsage(ch: ClickHouseClient, database: string, q: UsageQuery): Promise<UsageResult> {
  if (q.window === 'none') {
    const [total] = await queryUsageTotals(ch, database, [q]);
    return { windows: [total!], total: total! };
  }
  const query = `SELECT ${windowKeySql(q.window)} AS w, ${statsColumns(q.type).join(', ')}
    FROM ${database}.${USAGE_TABLE} FINAL
    WHERE account_id = ${chString(q.accountId)} AND meter_id = ${chString(q.meterId)}
      AND ts_ms >= ${Math.trunc(q.startMs)} AND ts_ms < ${Math.trunc(q.endMs)}
    GROUP BY w WITH TOTALS
    ORDER BY w`;
  const rs = await ch.query({ query, format: 'JSON' });
  const json = (await rs.json()) as unknown as { data: Row[]; totals?: Row };
  const byKey = new Map<number, Row>();
  for (const r of json.data) byKey.set(Number(r.w), r);
  const windows = windowsOf(q.window, q.startMs, q.endMs).map((w) => stats(w.start, w.end, byKey.get(w.key)));
  const totalRow = json.totals && Number(json.totals.c) > 0 ? json.totals : undefined;
  return { windows, total: stats(q.startMs, q.endMs, totalRow) };
}

/**
 * Totals of many meters at once, in request order, with the dedup of `GET …/usage?window=none` (it calls
 * this). One query per distinct (range, meter type) and at most TOTALS_CHUNK meters, filtered with
 * `(account_id, meter_id) IN (…)` on the table's key prefix: a billing run over thousands of meters of one
 * period costs a handful of queries.
 */
export async function queryUsageTotals(ch: ClickHouseClient, database: string, requests: readonly UsageTotalsRequest[]): Promise<WindowStats[]> {
  const groups = new Map<string, { req: UsageTotalsRequest; index: number }[]>();
  requests.forEach((req, index) => {
    const key = `${Math.trunc(req.startMs)}:${Math.trunc(req.endMs)}:${req.type}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push({ req, index });
  });
  const out: WindowStats[] = new Array(requests.length);
  const pairKey = (a: string, m: string) => `${a}\u0000${m}`;
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i += TOTALS_CHUNK) {
      const chunk = group.slice(i, i + TOTALS_CHUNK);
      const { startMs, endMs, type } = chunk[0]!.req;
      const pairs = [...new Set(chunk.map(({ req }) => `(${chString(req.accountId)}, ${chString(req.meterId)})`))];
      const query = `SELECT account_id AS a, meter_id AS m, ${statsColumns(type).join(', ')}
        FROM ${database}.${USAGE_TABLE} FINAL
        WHERE (account_id, meter_id) IN (${pairs.join(', ')})
          AND ts_ms >= ${Math.trunc(startMs)} AND ts_ms < ${Math.trunc(endMs)}
        GROUP BY a, m`;
      const rs = await ch.query({ query, format: 'JSON' });
      const json = (await rs.json()) as unknown as { data: Row[] };
      const byPair = new Map<string, Row>();
      for (const r of json.data) byPair.set(pairKey(r.a!, r.m!), r);
      for (const { req, index } of chunk) out[index] = stats(req.startMs, req.endMs, byPair.get(pairKey(req.accountId, req.meterId)));
    }
  }
  return out;
}

function stats(start: number, end: number, r: Row | undefined): WindowStats {
  if (!r || Number(r.c) === 0) return { start, end, count: 0, sum: '0' };
  const out: WindowStats = { start, end, count: Number(r.c), sum: r.s };
  if (r.mn !== undefined) out.min = r.mn;
  if (r.mx !== undefined) out.max = r.mx;
  if (r.last !== undefined) out.last = r.last;
  if (r.q !== undefined) out.percentiles = r.q.map(Number);
  return out;
}
