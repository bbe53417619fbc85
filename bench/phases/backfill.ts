/**
 * Late data and hot meters (issue 27), phases `backfill` and `hot-hour`, through the public API only (so they
 * measure whatever storage design is in place):
 * - `live`: --backfill-records (5 M) records in 100-record batches from wrk, every record in the current minute,
 *   to a meter of their own; `backfill`: as many, each batch spread over the last 30 days (100 closed hours per
 *   batch). For each: the accepted rate; the drain — records stored (usage_records' rows, from ClickHouse's part
 *   metadata as bench/pipeline-cost.ts counts them: nothing read, so polling every 200 ms costs nothing) — of the
 *   first million against the last, and the time from the end of the load until all are stored; then until
 *   GET /v1/meters/{id}/usage answers all of them (`api_visible_after_load_s`: a closed hour's late records count
 *   there once its rollup is recomputed); the pipeline's CPU per record (api + NATS + consumer + ClickHouse, not
 *   the load generator) from the start of the load until all are stored and merged. Backfill against live in
 *   the same run, as ratios. Polling the usage read itself during the drain was tried: with 5 M records in the
 *   open hour each read scans them raw (seconds of ClickHouse CPU, charged to the pipeline, and over the api's
 *   10 s limit on a loaded machine).
 * - `hot-hour`: the live meter (≥ 5 M records in the current hour) read alone: p50/p99 of the usage read.
 * - `visible-rate` (with either): the highest offered rate (open loop, a step search) at which ingest → visible
 *   p99 stays ≤ 2 s, live and backfill (bench/lag-probe.ts, its probes as late as the traffic); the records go to
 *   the shape's meter when it ran (a backfill into a month already holding millions), else to a fresh one.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { CpuMeter } from '../cpu.js';
import { LagProbe } from '../lag-probe.js';
import { runWrk, type LoadResult } from '../load.js';
import { runOpenLoop } from '../open-loop.js';
import {
  pipelineCost,
  storedRowCount,
  waitForMergesIdle,
  waitForMeterSettled,
  waitForRows,
  type PipelineCost,
} from '../pipeline-cost.js';
import { addBenchMeter, type BenchWorld } from '../world.js';
import { arg, list, opts } from '../options.js';
import { readClient } from './usage-reads.js';
import { hourWithRoom, timeHotReads, type HotReads } from './hot-reads.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type IngestShape = 'live' | 'backfill';

export interface ShapeRun {
  shape: IngestShape;
  meter_id: string;
  records: number;
  load_s: number;
  accepted_per_s: number;
  load: Pick<LoadResult, 'requests' | 'latency_p50_ms' | 'latency_p99_ms' | 'non_2xx' | 'errors'>;
  /** Visible records per second over the first and over the last `chunk_records` (1 M, or a fifth of a small run). */
  drain: {
    chunk_records: number;
    first_per_s: number;
    last_per_s: number;
    last_vs_first: number;
    /** [seconds since the load started, records stored], at most 200 of the polls. */
    samples: [number, number][];
  };
  all_visible: boolean;
  /**
   * From the end of the load until the stored rows reached the accepted count. They include duplicates a
   * redelivery inserted again (ReplacingMergeTree merges them away later), so this can come before the last
   * records are stored: api_visible_after_load_s is the exact figure.
   */
  visible_after_load_s: number;
  /** Until every hour the load touched was recomputed (then read from rollups, not raw). */
  settled_after_load_s: number;
  /** From the end of the load until GET usage counted every record (null: not within 5 minutes). */
  api_visible_after_load_s: number | null;
  /** Usage reads that failed meanwhile (503: over the api's query time limit). */
  api_read_failures: number;
  pipeline: PipelineCost;
}

export interface RateStep {
  offered_records_per_s: number;
  accepted_records_per_s: number;
  /** Answered other than 202. */
  refused: number;
  /** Due but not sent: 512 requests were outstanding (bench/open-loop.ts). */
  behind: number;
  probes: number;
  seen: number;
  lag_p50_ms: number;
  lag_p99_ms: number;
  ok: boolean;
}

export interface IngestShapesResult {
  records_target: number;
  live?: ShapeRun;
  backfill?: ShapeRun;
  /** backfill ÷ live, same run; the targets: CPU ≤ 1.2, last-million drain ≥ 0.9 × first, all-visible time ≤ 2. */
  ratios?: { cpu_per_record: number; drain_last_vs_first: number; all_visible_time: number };
  hot_hour?: { records: number; hour_still_open: boolean; read: HotReads };
  visible_rate?: Partial<Record<IngestShape, { max_records_per_s: number | null; steps: RateStep[] }>>;
}

export interface IngestShapesRun {
  world: BenchWorld;
  apiUrl: string;
  ch: ClickHouseClient;
  cpu: CpuMeter;
  log: (m: string) => void;
  acceptedRecords: () => Promise<number>;
  records: number;
  batch: number;
  connections: number;
  threads: number;
  backfill: boolean;
  hotHour: boolean;
  /** Offered rates (records/s) of the step search per shape; empty: no search. */
  rates: Partial<Record<IngestShape, number[]>>;
  rateSeconds: number;
  pollMs: number;
}

/** 31 days back: every read covers the whole backfill range, live or not (the same query shape for both). */
const visibleQuery = () => ({
  window: 'none' as const,
  start_date: new Date(Date.now() - 31 * DAY).toISOString().slice(0, 10),
});

/**
 * Request bodies of `batch` records each. Live: one body, every record a second ago. Backfill: `bodies` bodies,
 * body j's record i at from + (i·bodies + j)·step over [now − 30 days, now − 2 hours] — each batch touches `batch`
 * closed hours spread over the month, and all of them cover every hour of it.
 */
export function shapeBodies(shape: IngestShape, batch: number, now = Date.now(), bodies = 72): string[] {
  if (shape === 'live') {
    const ts = new Date(now - 1000).toISOString();
    return [JSON.stringify(Array.from({ length: batch }, (_, i) => ({ value: (i % 10) + 1, timestamp: ts })))];
  }
  const from = now - 30 * DAY;
  const step = (now - 2 * HOUR - from) / (batch * bodies);
  return Array.from({ length: bodies }, (_, j) =>
    JSON.stringify(
      Array.from({ length: batch }, (_, i) => ({
        value: (i % 10) + 1,
        timestamp: new Date(from + Math.floor((i * bodies + j) * step)).toISOString(),
      })),
    ),
  );
}

/** When the visible count first reached `k`, interpolated between the polls around it (seconds since the load started). */
function crossing(samples: [number, number][], k: number): number {
  for (let i = 0; i < samples.length; i++) {
    const [t, n] = samples[i]!;
    if (n < k) continue;
    if (i === 0) return t;
    const [t0, n0] = samples[i - 1]!;
    return t0 + ((t - t0) * (k - n0)) / (n - n0);
  }
  return NaN;
}

/** Polls the rows stored since `base` every 200 ms until `done` says so (or 30 minutes passed). */
async function pollStored(r: IngestShapesRun, base: number, t0: number, done: (stored: number) => boolean) {
  const samples: [number, number][] = [[0, 0]];
  const until = Date.now() + 30 * 60_000;
  for (;;) {
    const stored = (await storedRowCount(r.ch)) - base;
    samples.push([(performance.now() - t0) / 1000, stored]);
    if (done(stored) || Date.now() > until) return samples;
    await sleep(200);
  }
}

/** Polls GET usage of the meter until it counts `records` (or 5 minutes): seconds since `t0`, and the failed reads. */
async function apiVisible(r: IngestShapesRun, meterId: string, records: number, t0: number) {
  const client = readClient(r.apiUrl, r.world.token);
  const until = Date.now() + 5 * 60_000;
  let failures = 0;
  while (Date.now() < until) {
    const started = performance.now();
    try {
      // An answer counts what was stored when its query began: dated at the poll's start.
      if ((await client.getUsage(meterId, visibleQuery())).count >= records)
        return { s: (started - t0) / 1000, failures };
    } catch {
      failures++; // over the api's query time limit (503), under load
    }
    await sleep(500);
  }
  return { s: null, failures };
}

/** One shape at full speed from wrk: `records` records (or a little more: every connection's last answer counts). */
async function runShape(r: IngestShapesRun, shape: IngestShape): Promise<ShapeRun> {
  const meterId = await addBenchMeter(r.world, `bench ${shape}`, {});
  const bodies = shapeBodies(shape, r.batch);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${r.world.token}` };
  const url = `${r.apiUrl}/v1/meters/${meterId}/usage`;
  await waitForMergesIdle(r.ch);
  const before = await r.acceptedRecords();
  const storedBefore = await storedRowCount(r.ch);
  const perThread = Math.ceil(r.records / r.batch / r.threads);
  r.log(`${shape}: ${perThread * r.threads * r.batch} records to meter ${meterId}`);
  r.cpu.begin();
  const t0 = performance.now();
  let loadEnd = Number.POSITIVE_INFINITY;
  let accepted = Number.POSITIVE_INFINITY;
  const polling = pollStored(r, storedBefore, t0, (stored) => stored >= accepted);
  const load = await runWrk({
    url,
    body: bodies[0]!,
    bodies: bodies.length > 1 ? bodies : undefined,
    headers,
    connections: r.connections,
    threads: r.threads,
    seconds: 3600,
    acceptedPerThread: perThread,
  });
  loadEnd = (performance.now() - t0) / 1000;
  // Answers still in flight when wrk stopped are accepted a moment later: the count once it stops moving.
  let settled = -1;
  for (let n = (await r.acceptedRecords()) - before; n !== settled; ) {
    settled = n;
    await sleep(300);
    n = (await r.acceptedRecords()) - before;
  }
  accepted = settled;
  r.log(`${shape}: ${accepted} accepted in ${loadEnd.toFixed(1)} s; waiting until all are visible`);
  const target = accepted;
  const samples = await polling;
  // Until every hour the load marked is recomputed (services/domain/usage/hour-marks.ts): reads are exact before, and from
  // rollups only after — that work belongs to the shape's cost.
  await waitForMeterSettled(r.ch, meterId);
  const settledS = (performance.now() - t0) / 1000;
  const visibleS = settledS;
  const mergeS = await waitForMergesIdle(r.ch);
  const cost = pipelineCost(r.cpu, target, visibleS + mergeS, visibleS - loadEnd, mergeS);
  r.cpu.end();
  const api = await apiVisible(r, meterId, target, t0);
  const chunk = Math.min(1_000_000, Math.floor(target / 5));
  const first = chunk / crossing(samples, chunk);
  const last = chunk / (crossing(samples, target) - crossing(samples, target - chunk));
  const all = samples[samples.length - 1]![1] >= target;
  const every = Math.max(1, Math.ceil(samples.length / 200));
  const result: ShapeRun = {
    shape,
    meter_id: meterId,
    records: target,
    load_s: round(loadEnd),
    accepted_per_s: Math.round(target / loadEnd),
    load: {
      requests: load.requests,
      latency_p50_ms: load.latency_p50_ms,
      latency_p99_ms: load.latency_p99_ms,
      non_2xx: load.non_2xx,
      errors: load.errors,
    },
    drain: {
      chunk_records: chunk,
      first_per_s: Math.round(first),
      last_per_s: Math.round(last),
      last_vs_first: round(last / first),
      samples: samples.filter((_, i) => i % every === 0 || i === samples.length - 1).map(([t, n]) => [round(t, 1), n]),
    },
    all_visible: all,
    visible_after_load_s: all ? round(crossing(samples, target) - loadEnd, 1) : NaN,
    settled_after_load_s: round(settledS - loadEnd, 1),
    api_visible_after_load_s: api.s === null ? null : round(Math.max(0, api.s - loadEnd), 1),
    api_read_failures: api.failures,
    pipeline: cost,
  };
  r.log(
    `${shape}: ${result.accepted_per_s} records/s accepted; drain ${result.drain.first_per_s} → ${result.drain.last_per_s} records/s (first vs last ${chunk}); all stored ${result.visible_after_load_s} s after the load, settled ${result.settled_after_load_s} s after, counted by GET usage ${result.api_visible_after_load_s ?? '—'} s after (${api.failures} failed reads); ${cost.us_per_record} µs/record ${JSON.stringify(cost.us_per_record_by_group)}`,
  );
  return result;
}

/** The step search: each offered rate for `rateSeconds` with probes as late as the traffic, up to the first miss. */
async function visibleRate(
  r: IngestShapesRun,
  shape: IngestShape,
  rates: number[],
  /** The shape's full-speed meter when it ran: late records then land in hours already holding its records. */
  loadedMeterId?: string,
): Promise<{ max_records_per_s: number | null; steps: RateStep[] }> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${r.world.token}` };
  const steps: RateStep[] = [];
  let max: number | null = null;
  for (const rate of rates) {
    const meterId = loadedMeterId ?? (await addBenchMeter(r.world, `bench ${shape} rate ${rate}`, {}));
    const storedBefore = await storedRowCount(r.ch);
    const probeMeterId = await addBenchMeter(r.world, `bench ${shape} rate ${rate} probe`, {});
    await waitForMergesIdle(r.ch);
    const probe = new LagProbe(
      r.apiUrl,
      r.world.token,
      probeMeterId,
      undefined,
      200,
      100,
      shape === 'live' ? 1000 : 10 * DAY,
    );
    probe.start();
    const sent = await runOpenLoop({
      url: `${r.apiUrl}/v1/meters/${meterId}/usage`,
      headers,
      bodies: shapeBodies(shape, r.batch),
      requestsPerS: rate / r.batch,
      seconds: r.rateSeconds,
    });
    const lag = await probe.stop(120_000);
    const step: RateStep = {
      offered_records_per_s: rate,
      accepted_records_per_s: Math.round((sent.accepted * r.batch) / r.rateSeconds),
      refused: sent.refused,
      behind: sent.behind,
      probes: lag.probes,
      seen: lag.seen,
      lag_p50_ms: lag.p50_ms,
      lag_p99_ms: lag.p99_ms,
      ok: false,
    };
    step.ok =
      lag.seen === lag.probes &&
      lag.p99_ms <= 2000 &&
      step.refused + step.behind === 0 &&
      step.accepted_records_per_s >= 0.95 * rate;
    steps.push(step);
    r.log(`visible-rate ${shape} ${rate}/s: ${JSON.stringify(step)}`);
    // The step's backlog gone before the next one starts (at most 3 minutes: a failed step's may never drain).
    await waitForRows(r.ch, storedBefore + sent.accepted * r.batch + lag.probes, 3 * 60_000);
    if (!step.ok) break;
    max = rate;
  }
  return { max_records_per_s: max, steps };
}

export async function runIngestShapes(r: IngestShapesRun): Promise<IngestShapesResult> {
  const out: IngestShapesResult = { records_target: r.records };
  if (r.hotHour) await hourWithRoom(8 * 60_000, r.log);
  out.live = await runShape(r, 'live');
  if (r.hotHour) {
    const hour = Math.floor((Date.now() - 2000) / HOUR);
    const read = await timeHotReads({ apiUrl: r.apiUrl, token: r.world.token }, out.live.meter_id, {
      window: 'hour',
      start_date: new Date(hour * HOUR).toISOString().slice(0, 10),
    });
    out.hot_hour = { records: out.live.records, hour_still_open: Math.floor(Date.now() / HOUR) === hour, read };
    r.log(
      `hot-hour: ${read.records} records, read alone p50 ${read.median_ms} ms, p99 ${read.p99_ms} ms, ${read.failed} failed`,
    );
  }
  if (r.backfill) {
    out.backfill = await runShape(r, 'backfill');
    const l = out.live;
    const b = out.backfill;
    out.ratios = {
      cpu_per_record: round(b.pipeline.us_per_record / l.pipeline.us_per_record),
      drain_last_vs_first: b.drain.last_vs_first,
      // GET usage's count when both have one: the stored rows include redelivered duplicates, which the count doesn't.
      all_visible_time:
        b.api_visible_after_load_s !== null && l.api_visible_after_load_s !== null
          ? round(b.api_visible_after_load_s / l.api_visible_after_load_s)
          : round(b.visible_after_load_s / l.visible_after_load_s),
    };
  }
  for (const shape of ['live', 'backfill'] as const) {
    const rates = r.rates[shape];
    if (rates?.length) (out.visible_rate ??= {})[shape] = await visibleRate(r, shape, rates, out[shape]?.meter_id);
  }
  return out;
}

/**
 * bench/run.ts's entry: `phases` ⊆ backfill, hot-hour, visible-rate, with their options --backfill-records (5 M),
 * --live-rates and --backfill-rates (records/s of the step search), --rate-seconds (15), --visible-poll-ms (1000).
 */
export function runIngestShapesPhases(
  base: Pick<IngestShapesRun, 'world' | 'ch' | 'cpu' | 'log' | 'acceptedRecords'> & { apiPort: number },
  phases: string[],
): Promise<IngestShapesResult> {
  const search = phases.includes('visible-rate');
  return runIngestShapes({
    ...base,
    apiUrl: `http://127.0.0.1:${base.apiPort}`,
    records: arg('backfill-records', 5_000_000),
    batch: opts.batch,
    connections: opts.connections,
    threads: opts.threads,
    backfill: phases.includes('backfill'),
    hotHour: phases.includes('hot-hour'),
    rates: search
      ? {
          live: list('live-rates', [25_000, 50_000, 100_000, 200_000]),
          backfill: list('backfill-rates', [2_000, 4_000, 8_000, 16_000]),
        }
      : {},
    rateSeconds: arg('rate-seconds', 15),
    pollMs: arg('visible-poll-ms', 1000),
  });
}

const f = (n: number | undefined, d = 0) =>
  n !== undefined && Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d }) : '—';

export function ingestShapesLines(x: IngestShapesResult, reads10m?: number): string[] {
  const lines = ['', `late data and hot meters (issue 27), ${f(x.records_target)} records per shape:`];
  for (const s of [x.live, x.backfill]) {
    if (!s) continue;
    lines.push(
      `  ${s.shape}: ${f(s.records)} accepted at ${f(s.accepted_per_s)}/s; drain ${f(s.drain.first_per_s)} → ${f(s.drain.last_per_s)} records/s (first vs last ${f(s.drain.chunk_records)}: × ${f(s.drain.last_vs_first, 2)}); all stored ${f(s.visible_after_load_s, 1)} s after the load, settled ${f(s.settled_after_load_s, 1)} s after, counted by GET usage ${f(s.api_visible_after_load_s ?? undefined, 1)} s after (${s.api_read_failures} reads failed); ${f(s.pipeline.us_per_record, 1)} µs CPU/record`,
    );
  }
  if (x.ratios)
    lines.push(
      `  backfill vs live: CPU/record × ${f(x.ratios.cpu_per_record, 2)} (target ≤ 1.2); last-million drain × ${f(x.ratios.drain_last_vs_first, 2)} of the first (target ≥ 0.9); all-visible time × ${f(x.ratios.all_visible_time, 2)} (target ≤ 2)`,
    );
  if (x.hot_hour)
    lines.push(
      `  hot-hour: ${f(x.hot_hour.records)} records in the ${x.hot_hour.hour_still_open ? 'current' : 'just closed (!)'} hour, usage read alone p50 ${f(x.hot_hour.read.median_ms, 1)} ms, p99 ${f(x.hot_hour.read.p99_ms, 1)} ms, ${x.hot_hour.read.failed} of ${x.hot_hour.read.repeats} failed (target p50 ≤ 50 ms)${reads10m !== undefined ? `; 10 M over 30 days: ${f(reads10m, 1)} ms (target ≤ 50 ms)` : ''}`,
    );
  for (const [shape, v] of Object.entries(x.visible_rate ?? {}))
    lines.push(
      `  highest rate with ingest → visible p99 ≤ 2 s, ${shape}: ${v.max_records_per_s === null ? `below ${f(v.steps[0]?.offered_records_per_s)}` : f(v.max_records_per_s)} records/s (${v.steps.map((s) => `${f(s.offered_records_per_s)}: p99 ${f(s.lag_p99_ms)} ms`).join(', ')})`,
    );
  return lines;
}
