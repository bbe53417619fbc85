/**
 * Late data and hot meters (issue 27), phases `backfill` and `hot-hour`, through the public API only (so they
 * measure whatever storage design is in place):
 * - `live`: --backfill-records (5 M) records in 100-record batches from wrk, every record in the current minute,
 *   to a meter of their own; `backfill`: as many, each batch spread over the last 30 days (100 closed hours per
 *   batch). For each: the accepted rate, when the records become visible in GET /v1/meters/{id}/usage (its
 *   `count`, polled), the drain rate of the first million against the last, the time from the end of the load
 *   until all are visible, and the pipeline's CPU per record (api + NATS + consumer + ClickHouse, not the load
 *   generator: bench/pipeline-cost.ts) from the start of the load until all are visible and merged. The polls'
 *   own CPU is measured afterwards (polls alone) and taken out (`us_per_record_net`), reported beside the raw
 *   figure. Backfill is compared with live in the same run, as ratios.
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
import { PIPELINE_GROUPS, pipelineCost, waitForMergesIdle, type PipelineCost } from '../pipeline-cost.js';
import { addBenchMeter, type BenchWorld } from '../world.js';
import { arg, list, opts } from '../options.js';
import { readClient, timeQueryAlone, type QueryAlone } from './usage-reads.js';

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
    /** [seconds since the load started, records visible], at most 200 of the polls. */
    samples: [number, number][];
  };
  all_visible: boolean;
  visible_after_load_s: number;
  pipeline: PipelineCost;
  polls: number;
  /** CPU of the visibility polls (measured alone afterwards), per record of the run, in µs. */
  poll_us_per_record: number;
  /** pipeline.us_per_record less the polls'. */
  us_per_record_net: number;
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
  hot_hour?: { records: number; hour_still_open: boolean; read: QueryAlone };
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

/** Polls the meter's visible count (one read at a time, at most half the time busy) until `stop()` says so. */
async function pollVisible(
  r: IngestShapesRun,
  meterId: string,
  t0: number,
  done: (visible: number) => boolean,
): Promise<{ samples: [number, number][]; polls: number }> {
  const client = readClient(r.apiUrl, r.world.token);
  const samples: [number, number][] = [[0, 0]];
  let polls = 0;
  for (;;) {
    const started = performance.now();
    let visible = samples[samples.length - 1]![1];
    try {
      visible = (await client.getUsage(meterId, visibleQuery())).count;
      polls++;
    } catch {
      // a busy api or ClickHouse: the next poll catches up
    }
    const now = performance.now();
    samples.push([(now - t0) / 1000, visible]);
    if (done(visible)) return { samples, polls };
    await sleep(Math.max(r.pollMs - (now - started), now - started));
  }
}

/** CPU per visibility poll (µs, pipeline groups), polls alone once everything is visible. */
async function pollCpuUs(r: IngestShapesRun, meterId: string, n = 5): Promise<number> {
  const client = readClient(r.apiUrl, r.world.token);
  await client.getUsage(meterId, visibleQuery());
  r.cpu.begin();
  for (let i = 0; i < n; i++) await client.getUsage(meterId, visibleQuery());
  const used = r.cpu.usedSeconds();
  r.cpu.end();
  return (PIPELINE_GROUPS.reduce((s, g) => s + (used[g] ?? 0), 0) * 1e6) / n;
}

/** One shape at full speed from wrk: `records` records (or a little more: every connection's last answer counts). */
async function runShape(r: IngestShapesRun, shape: IngestShape): Promise<ShapeRun> {
  const meterId = await addBenchMeter(r.world, `bench ${shape}`, {});
  const bodies = shapeBodies(shape, r.batch);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${r.world.token}` };
  const url = `${r.apiUrl}/v1/meters/${meterId}/usage`;
  await waitForMergesIdle(r.ch);
  const before = await r.acceptedRecords();
  const perThread = Math.ceil(r.records / r.batch / r.threads);
  r.log(`${shape}: ${perThread * r.threads * r.batch} records to meter ${meterId}`);
  r.cpu.begin();
  const t0 = performance.now();
  let loadEnd = Number.POSITIVE_INFINITY;
  let accepted = Number.POSITIVE_INFINITY;
  const polling = pollVisible(r, meterId, t0, (visible) => visible >= accepted);
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
  const deadline = setTimeout(() => (accepted = -1), 30 * 60_000); // gives up after 30 minutes
  const target = accepted;
  const { samples, polls } = await polling;
  clearTimeout(deadline);
  const visibleS = (performance.now() - t0) / 1000;
  const mergeS = await waitForMergesIdle(r.ch);
  const cost = pipelineCost(r.cpu.usedSeconds(), target, visibleS + mergeS, visibleS - loadEnd, mergeS);
  r.cpu.end();
  const pollUs = (polls * (await pollCpuUs(r, meterId))) / target;
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
    pipeline: cost,
    polls,
    poll_us_per_record: round(pollUs),
    us_per_record_net: round(cost.us_per_record - pollUs),
  };
  r.log(
    `${shape}: ${result.accepted_per_s} records/s accepted; drain ${result.drain.first_per_s} → ${result.drain.last_per_s} records/s (first vs last ${chunk}); all visible ${result.visible_after_load_s} s after the load; ${result.us_per_record_net} µs/record net (${cost.us_per_record} with ${polls} polls) ${JSON.stringify(cost.us_per_record_by_group)}`,
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
  const client = readClient(r.apiUrl, r.world.token);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${r.world.token}` };
  const steps: RateStep[] = [];
  let max: number | null = null;
  for (const rate of rates) {
    const meterId = loadedMeterId ?? (await addBenchMeter(r.world, `bench ${shape} rate ${rate}`, {}));
    const visibleBefore = (await client.getUsage(meterId, visibleQuery())).count;
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
    // The step's backlog gone before the next one starts.
    const until = Date.now() + 10 * 60_000;
    const target = visibleBefore + sent.accepted * r.batch;
    while ((await client.getUsage(meterId, visibleQuery())).count < target && Date.now() < until) await sleep(1000);
    if (!step.ok) break;
    max = rate;
  }
  return { max_records_per_s: max, steps };
}

/** Waits, if the current hour ends within `ms`, until the next one has begun: the hot hour must still be open when read. */
async function hourWithRoom(ms: number, log: (m: string) => void): Promise<void> {
  const left = HOUR - (Date.now() % HOUR);
  if (left > ms) return;
  log(`hot-hour: the hour ends in ${Math.round(left / 1000)} s; waiting for the next one`);
  await sleep(left + 2000);
}

export async function runIngestShapes(r: IngestShapesRun): Promise<IngestShapesResult> {
  const out: IngestShapesResult = { records_target: r.records };
  if (r.hotHour) await hourWithRoom(8 * 60_000, r.log);
  out.live = await runShape(r, 'live');
  if (r.hotHour) {
    const hour = Math.floor((Date.now() - 2000) / HOUR);
    const read = await timeQueryAlone(readClient(r.apiUrl, r.world.token), out.live.meter_id, {
      window: 'hour',
      start_date: new Date(hour * HOUR).toISOString().slice(0, 10),
    });
    out.hot_hour = { records: out.live.records, hour_still_open: Math.floor(Date.now() / HOUR) === hour, read };
    r.log(`hot-hour: ${read.records} records, read alone p50 ${read.median_ms} ms, p99 ${read.p99_ms} ms`);
  }
  if (r.backfill) {
    out.backfill = await runShape(r, 'backfill');
    const l = out.live;
    const b = out.backfill;
    out.ratios = {
      cpu_per_record: round(b.us_per_record_net / l.us_per_record_net),
      drain_last_vs_first: b.drain.last_vs_first,
      all_visible_time: round(b.visible_after_load_s / l.visible_after_load_s),
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
      `  ${s.shape}: ${f(s.records)} accepted at ${f(s.accepted_per_s)}/s; drain ${f(s.drain.first_per_s)} → ${f(s.drain.last_per_s)} records/s (first vs last ${f(s.drain.chunk_records)}: × ${f(s.drain.last_vs_first, 2)}); all visible ${f(s.visible_after_load_s, 1)} s after the load; ${f(s.us_per_record_net, 1)} µs CPU/record (${f(s.pipeline.us_per_record, 1)} with its ${s.polls} polls)`,
    );
  }
  if (x.ratios)
    lines.push(
      `  backfill vs live: CPU/record × ${f(x.ratios.cpu_per_record, 2)} (target ≤ 1.2); last-million drain × ${f(x.ratios.drain_last_vs_first, 2)} of the first (target ≥ 0.9); all-visible time × ${f(x.ratios.all_visible_time, 2)} (target ≤ 2)`,
    );
  if (x.hot_hour)
    lines.push(
      `  hot-hour: ${f(x.hot_hour.read.records)} records in the ${x.hot_hour.hour_still_open ? 'current' : 'just closed (!)'} hour, usage read alone p50 ${f(x.hot_hour.read.median_ms, 1)} ms, p99 ${f(x.hot_hour.read.p99_ms, 1)} ms (target p50 ≤ 50 ms)${reads10m !== undefined ? `; 10 M over 30 days: ${f(reads10m, 1)} ms (target ≤ 50 ms)` : ''}`,
    );
  for (const [shape, v] of Object.entries(x.visible_rate ?? {}))
    lines.push(
      `  highest rate with ingest → visible p99 ≤ 2 s, ${shape}: ${v.max_records_per_s === null ? `below ${f(v.steps[0]?.offered_records_per_s)}` : f(v.max_records_per_s)} records/s (${v.steps.map((s) => `${f(s.offered_records_per_s)}: p99 ${f(s.lag_p99_ms)} ms`).join(', ')})`,
    );
  return lines;
}
