import type { ClickHouseClient } from '@clickhouse/client';
import type { MeterType } from '../meters/record.js';
import { USAGE_TABLE } from './wire.js';
import { windowKeySql, windowsOf, type UsageWindow } from './windows.js';

/** Percentiles every histogram window reports. */
export const PERCENTILES = [0.5, 0.9, 0.95, 0.99] as const;

export interface UsageQuery {
  accountId: string;
  meterId: string;
  type: MeterType;
  startMs: number;
  endMs: number;
  window: UsageWindow;
}

/** Aggregates of one window; decimals as exact strings ("0.300000000"), absent when the window is empty. */
export interface WindowStats {
  start: number;
  end: number;
  count: number;
  sum: string;
  min?: string;
  max?: string;
  /** Value with the latest timestamp (ties: the greatest record id). */
  last?: string;
  /** t-digest estimates for PERCENTILES (ClickHouse quantilesTDigest, Float32). */
  percentiles?: number[];
}

export interface UsageResult {
  windows: WindowStats[];
  total: WindowStats;
}

interface Row {
  w: string | number;
  c: string | number;
  s: string;
  mn?: string;
  mx?: string;
  last?: string;
  q?: number[];
}

/** A ClickHouse string literal (18.16 has no query parameters). */
export function chString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Usage of one meter over [startMs, endMs) by window, every window present (empty ones with count 0),
 * plus the whole range. One scan: FINAL collapses rows sharing (account, meter, ts, record id) — client
 * retries and redeliveries — and WITH TOTALS aggregates the range in the same pass. Measured on 18.16 with
 * 3.3 M rows: FINAL 0.9–1.3 s against 3.9–4.7 s for GROUP BY (ts_ms, record_id) with any(value).
 */
export async function queryUsage(ch: ClickHouseClient, database: string, q: UsageQuery): Promise<UsageResult> {
  const cols = [`${windowKeySql(q.window)} AS w`, 'count() AS c', 'toString(sum(value)) AS s'];
  if (q.type !== 'counter') cols.push('toString(min(value)) AS mn', 'toString(max(value)) AS mx');
  if (q.type === 'gauge') cols.push('toString(argMax(value, (ts_ms, record_id))) AS last');
  if (q.type === 'histogram') cols.push(`quantilesTDigest(${PERCENTILES.join(', ')})(toFloat64(value)) AS q`);
  const query = `SELECT ${cols.join(', ')}
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

function stats(start: number, end: number, r: Row | undefined): WindowStats {
  if (!r || Number(r.c) === 0) return { start, end, count: 0, sum: '0' };
  const out: WindowStats = { start, end, count: Number(r.c), sum: r.s };
  if (r.mn !== undefined) out.min = r.mn;
  if (r.mx !== undefined) out.max = r.mx;
  if (r.last !== undefined) out.last = r.last;
  if (r.q !== undefined) out.percentiles = r.q.map(Number);
  return out;
}
