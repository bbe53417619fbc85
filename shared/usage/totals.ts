import type { ClickHouseClient } from '@clickhouse/client';
import type { MeterType } from '../meters/record.js';
import { USAGE_TABLE } from './wire.js';
import { chString, PERCENTILES, type WindowStats } from './query.js';

/** One meter's usage over [startMs, endMs) as one total (what GET …/usage?window=none aggregates). */
export interface UsageTotalRequest {
  accountId: string;
  meterId: string;
  type: MeterType;
  startMs: number;
  endMs: number;
}

interface Row {
  a: string;
  m: string;
  c: string | number;
  s: string;
  mn?: string;
  mx?: string;
  last?: string;
  q?: number[];
}

/**
 * Totals of many meters in few queries: requests sharing a time range and meter type are answered by one
 * scan grouped by meter (a billing run over thousands of subscriptions of one period is a handful of
 * queries). Same dedup (FINAL) and the same aggregates per type as queryUsage. Results in request order.
 */
export async function queryUsageTotals(ch: ClickHouseClient, database: string, requests: UsageTotalRequest[]): Promise<WindowStats[]> {
  const groups = new Map<string, number[]>();
  requests.forEach((r, i) => {
    const key = `${Math.trunc(r.startMs)}:${Math.trunc(r.endMs)}:${r.type}`;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
  });
  const out: WindowStats[] = new Array(requests.length);
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      const first = requests[indexes[0]!]!;
      const byMeter = await totalsOfRange(ch, database, first.type, Math.trunc(first.startMs), Math.trunc(first.endMs), indexes.map((i) => requests[i]!));
      for (const i of indexes) {
        const r = requests[i]!;
        out[i] = stats(r.startMs, r.endMs, byMeter.get(`${r.accountId}\u0000${r.meterId}`));
      }
    }),
  );
  return out;
}

async function totalsOfRange(ch: ClickHouseClient, database: string, type: MeterType, startMs: number, endMs: number, reqs: UsageTotalRequest[]): Promise<Map<string, Row>> {
  const cols = ['account_id AS a', 'meter_id AS m', 'count() AS c', 'toString(sum(value)) AS s'];
  if (type !== 'counter') cols.push('toString(min(value)) AS mn', 'toString(max(value)) AS mx');
  if (type === 'gauge') cols.push('toString(argMax(value, (ts_ms, record_id))) AS last');
  if (type === 'histogram') cols.push(`quantilesTDigest(${PERCENTILES.join(', ')})(toFloat64(value)) AS q`);
  const accounts = [...new Set(reqs.map((r) => r.accountId))].map(chString).join(', ');
  const meters = [...new Set(reqs.map((r) => r.meterId))].map(chString).join(', ');
  const rs = await ch.query({
    query: `SELECT ${cols.join(', ')}
      FROM ${database}.${USAGE_TABLE} FINAL
      WHERE account_id IN (${accounts}) AND meter_id IN (${meters}) AND ts_ms >= ${startMs} AND ts_ms < ${endMs}
      GROUP BY account_id, meter_id`,
    format: 'JSON',
  });
  const json = (await rs.json()) as unknown as { data: Row[] };
  return new Map(json.data.map((r) => [`${r.a}\u0000${r.m}`, r]));
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
