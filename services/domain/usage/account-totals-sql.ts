import type { ClickHouseClient } from '@clickhouse/client';
import type { Row, UsageReadLimits } from './query.js';

/** A row of queryAccountTotals' SELECT: a part's (meter, account) totals, tagged with the part's index. */
export type PartRow = Row & { r: number | string };

/** Reads the parts (SELECTs of the same result columns) in ONE SELECT: a UNION ALL, each part tagged with its index. */
export async function readTaggedParts(
  ch: ClickHouseClient,
  parts: readonly string[],
  limits: UsageReadLimits,
): Promise<PartRow[]> {
  const sql = parts.map((part, p) => `SELECT toUInt32(${p}) AS r, * FROM (${part})`).join(' UNION ALL ');
  const rs = await ch.query({
    query: sql,
    format: 'JSON',
    clickhouse_settings: limits.maxExecutionSeconds ? { max_execution_time: limits.maxExecutionSeconds } : {},
  });
  return ((await rs.json()) as unknown as { data: PartRow[] }).data;
}
