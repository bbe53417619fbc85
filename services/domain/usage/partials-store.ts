/**
 * The SQL of partials (./partials.ts: what they are and how they are computed): storing an insert's partial rows,
 * and dropping the days no read needs any more.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { PARTIAL_COLUMNS, PARTIALS_TABLE } from './partials.js';

/** Stores partialLines' rows (on a cluster, into the shard's own table: `local`). */
export async function insertPartials(ch: ClickHouseClient, database: string, lines: Buffer, local = ''): Promise<void> {
  await ch.insert({
    table: `${database}.${PARTIALS_TABLE}${local}`,
    values: Readable.from([lines], { objectMode: false }),
    format: 'TabSeparated',
    columns: [...PARTIAL_COLUMNS],
  });
}

/** Drops the partials' days before `oldestDay` (YYYYMMDD) on one server (a replica: the drop is replicated). */
export async function dropOldPartials(
  ch: ClickHouseClient,
  database: string,
  oldestDay: number,
  local = '',
): Promise<number> {
  const table = `${PARTIALS_TABLE}${local}`;
  const rs = await ch.query({
    query: `SELECT DISTINCT partition AS p FROM system.parts WHERE database = '${database}' AND table = '${table}' AND active`,
    format: 'JSONEachRow',
  });
  const old = (await rs.json<{ p: string }>()).map((r) => Number(r.p)).filter((p) => p < oldestDay);
  for (const p of old) await ch.command({ query: `ALTER TABLE ${database}.${table} DROP PARTITION ${p}` });
  return old.length;
}
