/**
 * Dimension read phases (issue 18 §7, docs/design.md §11 read targets: a usage read over 10 M records,
 * 30 days, day windows ≤ 50 ms alone):
 *
 * - `group-by-reads`: a meter with `records` (10 M) records over 30 days, each with `model` = one of 20
 *   values, read with day windows: without slicing, grouped by model (20 groups × 30 windows), grouped and
 *   filtered to 5 models, and filtered to one model without grouping.
 * - `unique-counts`: a unique_count meter (`unique_by: user`) with `records` (2 M) records of `users` (1 M)
 *   distinct users (each in one of 4 regions) over 30 days, read with hour, day, month and none windows, and
 *   grouped or filtered by region; the whole range's answer must be exactly `users` (printed beside it, not
 *   asserted: a bench prints).
 *
 * Records go straight into ClickHouse and the closed hours are rolled up (bench/phases/usage-reads.ts
 * loadMeterDirect), then each read is timed alone over HTTP: the first warms, `repeats` are timed (p50, p99,
 * max). `rollup_rows` is what the rollup part of a whole-range read scans (the unswept hour is read raw).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { BenchWorld } from '../world.js';
import { addBenchMeter } from '../world.js';
import { loadMeterDirect, readClient, timeQueryAlone, type BulkLoad, type QueryAlone } from './usage-reads.js';
import { usageQueryString, type UsageQuery } from '../../shared/client/index.js';
import { chString, ROLLUP_TABLE } from '../../services/domain/usage/rollups-store.js';
import { UNIQUE_ROLLUP_TABLE } from '../../services/domain/usage/unique-rollups-store.js';

const DAY = 86_400_000;
const DAYS = 30;

export interface DimensionRead extends Partial<QueryAlone> {
  read: string;
  query: string;
  /** The read failed (e.g. 503: it ran over USAGE_QUERY_MAX_EXECUTION_SECONDS): printed, not thrown. */
  error?: string;
}

export interface DimensionReadsResult {
  phase: 'group-by-reads' | 'unique-counts';
  bulk_load: BulkLoad;
  distinct_values: number;
  rollup_rows: number;
  /** unique-counts: the per-hour distinct-set rows (services/domain/usage/unique-rollups-store.ts) its reads merge. */
  unique_rollup_rows?: number;
  reads: DimensionRead[];
}

interface PhaseDeps {
  world: BenchWorld;
  ch: ClickHouseClient;
  apiPort: number;
  log: (m: string) => void;
  records: number;
  repeats?: number;
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function rollupRows(
  ch: ClickHouseClient,
  database: string,
  accountId: string,
  meterId: string,
  table = ROLLUP_TABLE,
): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS c FROM ${database}.${table} FINAL WHERE account_id = ${chString(accountId)} AND meter_id = ${chString(meterId)}`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
}

/** Times each `name → query` read of the meter alone, over the last DAYS days. */
async function timeReads(deps: PhaseDeps, meterId: string, reads: [string, UsageQuery][]): Promise<DimensionRead[]> {
  const client = readClient(`http://127.0.0.1:${deps.apiPort}`, deps.world.token);
  const out: DimensionRead[] = [];
  for (const [read, slice] of reads) {
    const q: UsageQuery = { start_date: dateOf(Date.now() - DAYS * DAY), end_date: dateOf(Date.now()), ...slice };
    const query = decodeURIComponent(usageQueryString(slice));
    const timed = await timeQueryAlone(client, meterId, q, deps.repeats ?? 20).catch((err: Error) => err);
    if (timed instanceof Error) {
      out.push({ read, query, error: timed.message.slice(0, 300) });
      deps.log(`${read}: ${timed.message.slice(0, 300)}`);
      continue;
    }
    out.push({ read, query, ...timed });
    deps.log(
      `${read}: p50 ${timed.median_ms} ms, p99 ${timed.p99_ms} ms, max ${timed.max_ms} ms (${timed.windows} windows${timed.groups !== undefined ? `, ${timed.groups} groups` : ''}, value ${timed.value})`,
    );
  }
  return out;
}

export async function runGroupByReadsPhase(deps: PhaseDeps & { distinct?: number }): Promise<DimensionReadsResult> {
  const { world, ch } = deps;
  const distinct = deps.distinct ?? 20;
  const database = world.config.CLICKHOUSE_DATABASE;
  const meterId = await addBenchMeter(world, 'bench group-by reads', { dimensions: ['model'] });
  const load = await loadMeterDirect(ch, database, world.accountId, meterId, deps.records, DAYS, Date.now(), {
    key: 'model',
    distinct,
    prefix: 'model-',
  });
  deps.log(
    `group-by reads: loaded ${load.records} records (${distinct} models) in ${load.load_s} s, rollups rebuilt in ${load.rollup_rebuild_s} s`,
  );
  const five = Array.from({ length: Math.min(5, distinct) }, (_, i) => `model-${i}`);
  const reads = await timeReads(deps, meterId, [
    ['day windows, no slicing', { window: 'day' }],
    [`day windows, group_by=model (${distinct} groups)`, { window: 'day', group_by: ['model'] }],
    ['day windows, group_by=model, filter 5 models', { window: 'day', group_by: ['model'], filter: { model: five } }],
    ['day windows, filter[model]=model-3', { window: 'day', filter: { model: 'model-3' } }],
    ['window=none, group_by=model', { window: 'none', group_by: ['model'] }],
  ]);
  return {
    phase: 'group-by-reads',
    bulk_load: load,
    distinct_values: distinct,
    rollup_rows: await rollupRows(ch, database, world.accountId, meterId),
    reads,
  };
}

export async function runUniqueCountsPhase(deps: PhaseDeps & { users: number }): Promise<DimensionReadsResult> {
  const { world, ch } = deps;
  const database = world.config.CLICKHOUSE_DATABASE;
  const meterId = await addBenchMeter(world, 'bench unique users', {
    aggregation: 'unique_count',
    uniqueBy: 'user',
    dimensions: ['user', 'region'],
  });
  const load = await loadMeterDirect(ch, database, world.accountId, meterId, deps.records, DAYS, Date.now(), [
    { key: 'user', distinct: deps.users, prefix: 'user-' },
    { key: 'region', distinct: 4, prefix: 'region-' },
  ]);
  deps.log(
    `unique counts: loaded ${load.records} records (${deps.users} users, 4 regions) in ${load.load_s} s, rollups rebuilt in ${load.rollup_rebuild_s} s`,
  );
  const reads = await timeReads(deps, meterId, [
    ['window=none', { window: 'none' }],
    ['month windows', { window: 'month' }],
    ['day windows (30 days)', { window: 'day' }],
    ['hour windows (30 days)', { window: 'hour' }],
    ['day windows, group_by=region (4 groups)', { window: 'day', group_by: ['region'] }],
    ['window=none, group_by=region', { window: 'none', group_by: ['region'] }],
    ['day windows, filter[region]=region-1', { window: 'day', filter: { region: 'region-1' } }],
  ]);
  const rows = await rollupRows(ch, database, world.accountId, meterId);
  const uniqueRows = await rollupRows(ch, database, world.accountId, meterId, UNIQUE_ROLLUP_TABLE);
  deps.log(
    `unique counts: ${rows} usage_hourly rows, ${uniqueRows} ${UNIQUE_ROLLUP_TABLE} rows (what the reads merge)`,
  );
  return {
    phase: 'unique-counts',
    bulk_load: load,
    distinct_values: deps.users,
    rollup_rows: rows,
    unique_rollup_rows: uniqueRows,
    reads,
  };
}

/** The printed table: one row per read, beside the §11 target for a read alone (≤ 50 ms over 10 M records). */
export function dimensionReadLines(r: DimensionReadsResult): string[] {
  const head = `${r.phase}: ${r.bulk_load.records.toLocaleString('en-US')} records, ${r.distinct_values.toLocaleString('en-US')} distinct values, ${r.rollup_rows.toLocaleString('en-US')} rollup rows${r.unique_rollup_rows !== undefined ? ` (${r.unique_rollup_rows.toLocaleString('en-US')} distinct-set rows)` : ''} (load ${r.bulk_load.load_s} s, rollup rebuild ${r.bulk_load.rollup_rebuild_s} s, merges settled ${r.bulk_load.merges_settled_s} s); target ≤ 50 ms alone`;
  const rows = r.reads.map((x) =>
    x.error
      ? `  ${x.read.padEnd(48)} failed: ${x.error}`
      : `  ${x.read.padEnd(48)} p50 ${String(x.median_ms).padStart(8)} ms  p99 ${String(x.p99_ms).padStart(8)} ms  windows ${String(x.windows).padStart(4)}${x.groups !== undefined ? `  groups ${x.groups}` : ''}  value ${x.value}`,
  );
  return ['', head, ...rows];
}
