import type { ClickHouseClient } from '@clickhouse/client';
import { notCancelledSql } from './cancellations-store.js';
import { chString } from './sql.js';
import { USAGE_TABLE } from '../../../shared/usage/wire.js';

/**
 * Usage records for an export (docs/exports.md), read from ClickHouse in pages in the table's own order
 * (account, meter, timestamp, record id) with a keyset: each page is one bounded query that starts where the
 * last ended, so a month of records streams through without ever being held whole. Deduplicated (FINAL) and
 * without cancelled records, as every usage read.
 */
export interface UsageExportRow {
  account_id: string;
  meter_id: string;
  ts_text: string;
  record_id: string;
  value_text: string;
  received_text: string;
  dim_keys: string[];
  dim_values: string[];
}

export type UsageKey = [account: string, meter: string, tsMs: string, recordId: string];

export async function readUsagePage(
  ch: ClickHouseClient,
  database: string,
  fromMs: number,
  toMs: number,
  after: UsageKey | null,
  limit: number,
): Promise<{ rows: UsageExportRow[]; after: UsageKey | null }> {
  let seek = '';
  if (after) {
    const [a, m, ts, r] = after;
    // Spelled out: tuple comparison is not in ClickHouse 18.16.
    seek = ` AND (account_id > ${chString(a)} OR (account_id = ${chString(a)} AND (meter_id > ${chString(m)}
      OR (meter_id = ${chString(m)} AND (ts_ms > ${Number(ts)} OR (ts_ms = ${Number(ts)} AND record_id > ${chString(r)}))))))`;
  }
  const rs = await ch.query({
    // Aliases unlike the columns: ClickHouse would read an alias named as a column in WHERE too.
    query: `SELECT account_id, meter_id, toString(ts_ms) AS ts_text, record_id, toString(value) AS value_text,
        toString(received_ms) AS received_text, dim_keys, dim_values
      FROM ${database}.${USAGE_TABLE} FINAL
      WHERE ts_ms >= ${Math.trunc(fromMs)} AND ts_ms < ${Math.trunc(toMs)}${seek}
        AND ${notCancelledSql(database, '1')}
      ORDER BY account_id, meter_id, ts_ms, record_id
      LIMIT ${Math.trunc(limit)}`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<UsageExportRow>();
  const last = rows.at(-1);
  return {
    rows,
    after: rows.length < limit || !last ? null : [last.account_id, last.meter_id, last.ts_text, last.record_id],
  };
}
