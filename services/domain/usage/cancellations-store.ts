import type { ClickHouseClient } from '@clickhouse/client';
import { chString } from './sql.js';

/**
 * Cancelled usage records (issue 18 corrections; infra/migrations/clickhouse/330_usage_cancellations.sql): the
 * SQL every reader of usage_records uses to leave them out. A plain IN over a subquery — no -If combinators,
 * which ClickHouse 18.16 refuses on the t-digest state and crashes on over Decimal.
 */
export const CANCELLATIONS_TABLE = 'usage_cancellations';

export interface CancelledSqlOptions {
  /** '_local' when reading one shard's local tables (shared/clients/usage-shards.ts). */
  local?: string;
  /** Reading through a Distributed table: the subquery runs once and its set goes to every shard. */
  global?: boolean;
}

/**
 * Whether a usage row is cancelled, as a condition. `meters` limits the subquery to the meters read (a
 * condition over account_id and meter_id), so the set holds only their cancellations.
 */
export function cancelledSql(database: string, meters: string, o: CancelledSqlOptions = {}): string {
  return `(account_id, meter_id, record_id) ${o.global ? 'GLOBAL ' : ''}IN (SELECT account_id, meter_id, record_id FROM ${database}.${CANCELLATIONS_TABLE}${o.local ?? ''} WHERE ${meters})`;
}

export function notCancelledSql(database: string, meters: string, o: CancelledSqlOptions = {}): string {
  return `NOT ${cancelledSql(database, meters, o)}`;
}

/**
 * How many cancellations the table holds (deduplicated): only ever grows, so it orders rollup snapshots
 * across cancellations (see recomputeHours).
 */
export async function cancellationCount(ch: ClickHouseClient, database: string, local = ''): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM ${database}.${CANCELLATIONS_TABLE}${local} FINAL`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
}

/**
 * The meters among `meters` (a condition over account_id and meter_id) with at least one cancellation, as
 * `(account, meter)` SQL tuples: a recompute leaves the cancelled-records lookup out for the others.
 */
export async function correctedMeters(
  ch: ClickHouseClient,
  database: string,
  meters: string,
  local = '',
): Promise<string[]> {
  const rs = await ch.query({
    query: `SELECT DISTINCT account_id AS a, meter_id AS m FROM ${database}.${CANCELLATIONS_TABLE}${local} WHERE ${meters}`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ a: string; m: string }>()).map((r) => `(${chString(r.a)}, ${chString(r.m)})`);
}
