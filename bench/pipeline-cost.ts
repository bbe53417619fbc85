/**
 * The headline figure of docs/design.md §11: server CPU per accepted record over the whole ingest pipeline
 * (api, NATS, consumer, ClickHouse: every process but the load generator), read from /proc per process
 * group. The window runs from the start of the load until ClickHouse holds every record accepted so far,
 * so work the consumer and ClickHouse do after the load ends (the backlog) is counted, not left out — and then
 * until ClickHouse has merged the parts those inserts made (waitForMergesIdle): a merge runs after the INSERT
 * that caused it, and counted only while it overlapped a window it went to whichever phase ran next (the
 * attributed phase, right after batched, was charged up to 7.8 µs of ClickHouse per record in one run and
 * 3.5 in the next). A phase starts once the previous one's rows are stored and their merges done.
 */
import { isMarkedPerMinute, isReadFromRollups } from '../services/domain/usage/hour-marks.js';
import { hourStates } from '../services/domain/usage/hour-marks-store.js';
import { chString, HOUR_MS } from '../services/domain/usage/sql.js';
import { MINUTE_SETTLE_FLOOR } from '../services/domain/usage/hour-settler.js';
import type { ClickHouseClient } from '@clickhouse/client';
import type { CpuMeter } from './cpu.js';

/** The process groups that make up the ingest pipeline. */
export const PIPELINE_GROUPS = ['api', 'consumer', 'nats', 'clickhouse'] as const;

export interface PipelineCost {
  /** Records accepted (202 / ack) during the load. */
  records: number;
  /** Load plus drain, in seconds. */
  window_s: number;
  /** From the end of the load until ClickHouse held every accepted record. */
  drain_s: number;
  /** From then until ClickHouse ran no merge of the phase's parts (waitForMergesIdle). */
  merge_s?: number;
  /** CPU seconds per group over the window. */
  cpu_s: Record<string, number>;
  /** Σ over PIPELINE_GROUPS of CPU seconds ÷ records, in µs. */
  us_per_record: number;
  us_per_record_by_group: Record<string, number>;
  /** The whole machine's CPU less the load generator's over the window, per record (bench/cpu.ts machineBusySeconds). */
  machine_us_per_record?: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The cost of `records` from the CPU `cpu` measured since its begin() (bench/cpu.ts). */
export function pipelineCost(
  cpu: Pick<CpuMeter, 'usedSeconds' | 'machineLessGeneratorSeconds'>,
  records: number,
  windowS: number,
  drainS: number,
  mergeS?: number,
): PipelineCost {
  const cpuSeconds = cpu.usedSeconds();
  const machineS = cpu.machineLessGeneratorSeconds();
  const byGroup: Record<string, number> = {};
  let total = 0;
  for (const g of PIPELINE_GROUPS) {
    const s = cpuSeconds[g] ?? 0;
    total += s;
    byGroup[g] = records > 0 ? round2((s * 1e6) / records) : NaN;
  }
  const cpu_s = Object.fromEntries(Object.entries(cpuSeconds).map(([k, v]) => [k, round2(v)]));
  return {
    records,
    window_s: round2(windowS),
    drain_s: round2(drainS),
    ...(mergeS !== undefined ? { merge_s: round2(mergeS) } : {}),
    cpu_s,
    us_per_record: records > 0 ? round2((total * 1e6) / records) : NaN,
    us_per_record_by_group: byGroup,
    ...(records > 0 ? { machine_us_per_record: round2((machineS * 1e6) / records) } : {}),
  };
}

/** Raw rows of the account in usage_records (duplicates included): ≥ the deduplicated count. Reads the rows. */
export async function rawRowCount(ch: ClickHouseClient, accountId: string): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS c FROM usage_records WHERE account_id = '${accountId}'`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
}

/**
 * Rows in usage_records of the client's database (duplicates included), from the active parts' row counts:
 * metadata, nothing read. What the cost windows poll: a count() over the account's rows reads every row's
 * account id — ≈ 100 ms of ClickHouse CPU per poll at 4 M rows (this: 3.5 ms) — and polled every 100 ms
 * while the pipeline drained, that CPU was counted as the pipeline's. The bench world's database holds only the world's
 * account while the ingest phases run, so this is rawRowCount there. On a cluster (usage_records is Distributed,
 * its parts on every shard) it counts the rows instead.
 */
export async function storedRowCount(ch: ClickHouseClient): Promise<number> {
  const query = (await isDistributed(ch))
    ? 'SELECT count() AS c FROM usage_records'
    : `SELECT sum(rows) AS c FROM system.parts WHERE active AND database = currentDatabase() AND table = 'usage_records'`;
  const rs = await ch.query({ query, format: 'JSONEachRow' });
  return Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
}

/** Whether the client's usage_records is a cluster's Distributed table: looked up once per client, not per poll. */
const distributedByClient = new WeakMap<ClickHouseClient, Promise<boolean>>();
function isDistributed(ch: ClickHouseClient): Promise<boolean> {
  let known = distributedByClient.get(ch);
  if (!known) {
    known = ch
      .query({
        query: `SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'usage_records'`,
        format: 'JSONEachRow',
      })
      .then(async (rs) => (await rs.json<{ engine: string }>())[0]?.engine === 'Distributed');
    distributedByClient.set(ch, known);
  }
  return known;
}

/** Waits until usage_records holds `target` rows (storedRowCount), or the deadline; returns the seconds waited. */
export async function waitForRows(ch: ClickHouseClient, target: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while ((await storedRowCount(ch)) < target && Date.now() - t0 < timeoutMs)
    await new Promise((r) => setTimeout(r, 100));
  return (Date.now() - t0) / 1000;
}

/** Distinct records matching `where` (FINAL), once they reach `expected` or `timeoutMs` passed. */
export async function distinctCount(
  ch: ClickHouseClient,
  where: string,
  expected: number,
  timeoutMs: number,
): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rs = await ch.query({
      query: `SELECT count() AS c FROM usage_records FINAL WHERE ${where}`,
      format: 'JSONEachRow',
    });
    const n = Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
    if (n >= expected || Date.now() > until) return n;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Waits until ClickHouse has run no merge in the client's database for `quietMs` (or `timeoutMs` passed); returns
 * the seconds waited. system.merges lists the merges running now; one is picked within milliseconds of the
 * INSERT that made it worth doing, so a second without any means the parts are as merged as the load left them.
 */
export async function waitForMergesIdle(ch: ClickHouseClient, quietMs = 1_000, timeoutMs = 60_000): Promise<number> {
  const t0 = Date.now();
  let quietSince = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const rs = await ch.query({
      query: 'SELECT count() AS c FROM system.merges WHERE database = currentDatabase()',
      format: 'JSONEachRow',
    });
    const running = Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
    if (running > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= quietMs) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return (Date.now() - t0) / 1000;
}

/**
 * Waits until the settler has nothing left to recompute of the last two hours (services/domain/usage/hour-marks.ts): every
 * closed hour marked, and every busy open hour's quiet minutes (≥ MINUTE_SETTLE_FLOOR records: smaller open hours
 * are read raw and wait for their sweep). A phase's window then holds its own recomputes, not an earlier phase's.
 * Returns the seconds waited.
 */
export async function waitForSettled(ch: ClickHouseClient, timeoutMs = 120_000): Promise<number> {
  const t0 = Date.now();
  const rs = await ch.query({ query: 'SELECT currentDatabase() AS d', format: 'JSONEachRow' });
  const database = (await rs.json<{ d: string }>())[0]!.d;
  while (Date.now() - t0 < timeoutMs) {
    const open = Math.floor(Date.now() / HOUR_MS);
    const states = await hourStates(ch, database, `hour >= ${open - 2}`);
    const due = states.filter(
      (s) => !isReadFromRollups(s) && (s.hour < open || (isMarkedPerMinute(s) && s.records >= MINUTE_SETTLE_FLOOR)),
    );
    if (due.length === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return (Date.now() - t0) / 1000;
}

/** waitForSettled (up to `settleTimeoutMs`), then waitForMergesIdle (a settle's inserts make parts too): the seconds waited. */
export async function waitForQuiet(ch: ClickHouseClient, settleTimeoutMs?: number): Promise<number> {
  return (await waitForSettled(ch, settleTimeoutMs)) + (await waitForMergesIdle(ch));
}

/** Waits (up to 10 minutes) until a read takes no hour of the meter raw: every mark recomputed. */
export async function waitForMeterSettled(ch: ClickHouseClient, meterId: string): Promise<void> {
  const rs = await ch.query({ query: 'SELECT currentDatabase() AS d', format: 'JSONEachRow' });
  const database = (await rs.json<{ d: string }>())[0]!.d;
  const t0 = Date.now();
  while (Date.now() - t0 < 600_000) {
    const states = await hourStates(ch, database, `meter_id = ${chString(meterId)}`);
    if (states.every(isReadFromRollups)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
