import { cpus, loadavg, totalmem } from 'node:os';
import type { NoisyNeighbourResult } from './phases/noisy-neighbour.js';
import { webhooksGoals, type WebhooksResult } from './phases/webhooks.js';
import { billingRunLines, type BillingRunResult } from './phases/billing-run.js';
import { stripeBillingLines, type StripeBillingResult } from './phases/stripe-billing.js';
import { dimensionReadLines, type DimensionReadsResult } from './phases/dimension-reads.js';
import { emitterLines, type EmitterResult } from './phases/emitter.js';
import { attributedLines, type AttributedResult } from './phases/attributed.js';
import { ingestShapesLines, type IngestShapesResult } from './phases/backfill.js';
import { retryIdentityLines, type RetryIdentityResult } from './phases/retry-identity.js';
import { hotReadGoals, hotReadLines, type HotReadResult } from './phases/hot-read.js';
import { entitlementCheckGoals, type EntitlementCheckResult } from './phases/entitlement-check.js';
/** The benchmark's result document and its table, with the docs/design.md §11 goals checked. */
import type { LoadResult } from './load.js';
import type { LagSummary } from './lag-probe.js';
import { PIPELINE_GROUPS, type PipelineCost } from './pipeline-cost.js';

export interface PhaseResult extends LoadResult {
  phase:
    | 'ceiling'
    | 'floor'
    | 'publish-floor'
    | 'publish-floor-batched'
    | 'healthz'
    | 'single'
    | 'batched'
    | 'stream'
    | 'attributed'
    | 'get-product'
    | 'get-usage'
    | `control-reads ${string}`;
  records_per_request: number;
  records_per_s: number;
  /** Records the api processes reported as stored in JetStream during the phase (202s sent). */
  server_accepted_records?: number;
  /** JetStream messages acknowledged during the phase, and the records the group commit packed into each. */
  jetstream_messages?: number;
  records_per_message?: number;
  /** Cores used per process group during the phase. */
  cpu_cores: Record<string, number>;
  /** CPU time of the server processes (api, or the ceiling server) per request, in µs. */
  server_cpu_us_per_request: number;
  /** The whole machine's CPU less the load generator's during the load, per request (issue 45's measure). */
  machine_us_per_request?: number;
  /** Ingest phases: CPU per accepted record over api + NATS + consumer + ClickHouse, load and drain (bench/pipeline-cost.ts). */
  pipeline?: PipelineCost;
  /** Control-plane reads: req/s ÷ the docs/design.md §11 goal of 10k req/s. */
  goal_ratio?: number;
  /** get-usage: records the query aggregates (the response's `count`, after dedup) and raw rows in the table. */
  usage_records?: number;
  usage_raw_rows?: number;
  /** get-usage: one request alone before the load (ms), for comparison with the loaded latencies. */
  usage_query_alone_ms?: number;
}

/** docs/design.md §11: GET product / meter usage ≥ 10k req/s. */
export const CONTROL_READ_GOAL = 10_000;

export interface BenchReport {
  started_at: string;
  machine: { cpus: number; cpu_model: string; memory_gb: number; node: string; loadavg_before: number[] };
  options: Record<string, unknown>;
  phases: PhaseResult[];
  lag: (LagSummary & { probes_refused: number }) | undefined;
  count_check:
    | { accepted: number; stored: number; exact: boolean; raw_rows: number; drain_seconds_after_load: number }
    | undefined;
  /** One GET usage (day windows, 30 days) over the reads meter, timed alone: median (`ms`) and max of 20 (docs/design.md §11: ≤ 50 ms over 10 M). */
  usage_query?: {
    records: number;
    ms: number;
    max_ms?: number;
    windows?: number;
    bulk_load?: { records: number; days: number; load_s: number; rollup_rebuild_s: number };
  };
  goals?: Goal[];
  webhooks?: WebhooksResult;
  billing_run?: BillingRunResult;
  billing_run_mix?: BillingRunResult;
  billing_run_periods?: BillingRunResult;
  /** Billing through the Stripe processor and its simulator (bench/phases/stripe-billing.ts). */
  stripe_billing?: StripeBillingResult;
  noisy_neighbour?: NoisyNeighbourResult;
  /** Operator mode (bench/phases/attributed.ts). */
  attributed?: AttributedResult;
  /** Entitlement checks (bench/phases/entitlement-check.ts). */
  entitlement_check?: EntitlementCheckResult;
  group_by_reads?: DimensionReadsResult;
  unique_counts?: DimensionReadsResult;
  emitter?: EmitterResult;
  /** Late data and hot meters (bench/phases/backfill.ts, issue 27). */
  ingest_shapes?: IngestShapesResult;
  retry_identity?: RetryIdentityResult;
  /** A hot meter read while ingested (bench/phases/hot-read.ts, issue 45). */
  hot_read?: HotReadResult;
}

/** A run's report before its phases: when it started, on what machine, with which options. */
export function newReport(started: Date, options: Record<string, unknown>): BenchReport {
  return {
    started_at: started.toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? '?',
      memory_gb: Math.round(totalmem() / 1024 ** 3),
      node: process.version,
      loadavg_before: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    options,
    phases: [],
    lag: undefined,
    count_check: undefined,
  };
}

export interface Goal {
  goal: string;
  tool: string;
  measured: string;
  met: boolean;
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '—';

export function goalsOf(r: BenchReport): Goal[] {
  const goals: Goal[] = [];
  const tools = [...new Set(r.phases.map((p) => p.tool))];
  for (const tool of tools) {
    const ceiling = r.phases.find((p) => p.phase === 'ceiling' && p.tool === tool);
    const single = r.phases.find((p) => p.phase === 'single' && p.tool === tool);
    const batched = r.phases.find((p) => p.phase === 'batched' && p.tool === tool);
    if (ceiling && single) {
      const ratio = single.requests_per_s / ceiling.requests_per_s;
      goals.push({ goal: 'single ≥ 0.5 × ceiling', tool, measured: fmt(ratio, 2), met: ratio >= 0.5 });
      goals.push({
        goal: 'single p99 ≤ 25 ms',
        tool,
        measured: `${fmt(single.latency_p99_ms, 1)} ms`,
        met: single.latency_p99_ms <= 25,
      });
    }
    if (batched)
      goals.push({
        goal: 'batched ≥ 1,000,000 records/s',
        tool,
        measured: fmt(batched.records_per_s),
        met: batched.records_per_s >= 1_000_000,
      });
    // Cost goals (docs/design.md §11): single ≤ 2× the ceiling's CPU per request; batched and stream ≤ 2 µs per record.
    if (ceiling && single?.pipeline) {
      const ratio = single.pipeline.us_per_record / ceiling.server_cpu_us_per_request;
      goals.push({
        goal: 'single pipeline CPU ≤ 2 × ceiling',
        tool,
        measured: `${fmt(single.pipeline.us_per_record, 1)} vs ${fmt(ceiling.server_cpu_us_per_request, 1)} µs (× ${fmt(ratio, 2)})`,
        met: ratio <= 2,
      });
    }
    // Issue 45, as it measures: the whole machine's CPU less the load generator's, per record, against the
    // ceiling's per request (single ≤ 3×, batched ≤ 0.3×; the pipeline's window includes its drain and merges).
    const ceilingMachine = ceiling?.machine_us_per_request;
    // The publish floor (bench/publish-floor-server.ts) against single's limit: the least any api reaches here.
    const floorOf = (name: PhaseResult['phase']) => r.phases.find((x) => x.tool === tool && x.phase === name);
    for (const [p, limit] of [
      [single, 3],
      [floorOf('publish-floor'), 3],
      [batched, 0.3],
      [floorOf('publish-floor-batched'), 0.3],
    ] as const) {
      const us = p?.pipeline?.machine_us_per_record;
      if (!ceilingMachine || us === undefined) continue;
      const ratio = us / ceilingMachine;
      goals.push({
        goal: `${p!.phase}: machine CPU less generator ≤ ${limit} × ceiling`,
        tool,
        measured: `${fmt(us, 2)} vs ${fmt(ceilingMachine, 1)} µs (× ${fmt(ratio, 2)})`,
        met: ratio <= limit,
      });
    }
    for (const p of r.phases.filter(
      (x) =>
        x.tool === tool && (x.phase === 'batched' || x.phase === 'stream' || x.phase === 'attributed') && x.pipeline,
    )) {
      goals.push({
        goal: `${p.phase} pipeline CPU ≤ 2 µs/record`,
        tool,
        measured: `${fmt(p.pipeline!.us_per_record, 2)} µs`,
        met: p.pipeline!.us_per_record <= 2,
      });
    }
    for (const p of r.phases.filter((x) => x.tool === tool && x.phase === 'get-usage')) {
      // docs/design.md §11: usage reads over 10 M records under load.
      const over = p.usage_records !== undefined ? ` over ${fmt(p.usage_records)} records` : '';
      goals.push({
        goal: 'get-usage ≥ 2,000 req/s, p99 ≤ 100 ms',
        tool,
        measured: `${fmt(p.requests_per_s)} req/s, p99 ${fmt(p.latency_p99_ms, 1)} ms${over}`,
        met: p.requests_per_s >= 2_000 && p.latency_p99_ms <= 100 && (p.usage_records ?? 0) >= 10_000_000,
      });
    }
    // Issue 45: a read from memory costs the api ≤ 3× the ceiling's CPU per request.
    for (const p of r.phases.filter((x) => x.tool === tool && x.phase.startsWith('control-reads'))) {
      const ceilingUs = ceiling?.server_cpu_us_per_request ?? NaN;
      const ratio = p.server_cpu_us_per_request / ceilingUs;
      goals.push({
        goal: `${p.phase}: api CPU ≤ 3 × ceiling`,
        tool,
        measured: `${fmt(p.server_cpu_us_per_request)} vs ${fmt(ceilingUs)} µs (× ${fmt(ratio, 2)}), ${fmt(p.requests_per_s)} req/s, p99 ${fmt(p.latency_p99_ms, 1)} ms`,
        met: ratio <= 3,
      });
    }
    for (const p of r.phases.filter((x) => x.tool === tool && x.goal_ratio !== undefined && x.phase !== 'get-usage')) {
      const rows = p.usage_records !== undefined ? ` over ${fmt(p.usage_records)} records` : '';
      goals.push({
        goal: `${p.phase} ≥ 10k req/s`,
        tool,
        measured: `${fmt(p.requests_per_s)} (× ${fmt(p.goal_ratio!, 3)})${rows}`,
        met: p.requests_per_s >= CONTROL_READ_GOAL,
      });
    }
  }
  if (r.lag && r.lag.seen > 0)
    goals.push({
      goal: 'ingest → visible in GET usage p99 ≤ 2 s',
      tool: 'probe',
      measured: `${fmt(r.lag.p99_ms)} ms`,
      met: r.lag.p99_ms <= 2000,
    });
  if (r.usage_query) {
    // The goal speaks of 10 M records: a faster answer over fewer says nothing about it, a slower one fails it.
    const q = r.usage_query;
    const measured = `${fmt(q.ms)} ms over ${fmt(q.records)} records${q.records < 10_000_000 ? ' (goal needs 10 M)' : ''}`;
    goals.push({
      goal: 'usage query ≤ 50 ms (10 M records)',
      tool: 'alone',
      measured,
      met: q.ms <= 50 && q.records >= 10_000_000,
    });
  }
  if (r.attributed) goals.push(...attributedGoals(r.attributed));
  if (r.entitlement_check) goals.push(...entitlementCheckGoals(r.entitlement_check));
  if (r.hot_read) goals.push(...hotReadGoals(r.hot_read));
  if (r.webhooks) goals.push(...webhooksGoals(r.webhooks));
  if (r.count_check)
    goals.push({
      goal: 'ClickHouse count == accepted',
      tool: '—',
      measured: `${fmt(r.count_check.stored)} / ${fmt(r.count_check.accepted)}`,
      met: r.count_check.exact,
    });
  return goals;
}

/** Operator mode's goals (issue 26): attribution's CPU, the registry's memory and the api's start at 1 M customers. */
function attributedGoals(a: AttributedResult): Goal[] {
  const goals: Goal[] = Object.entries(a.cpu_ratio).map(([tool, ratio]) => ({
    goal: 'attributed CPU/record ≤ 1.1 × unattributed',
    tool,
    measured: `× ${fmt(ratio, 2)}`,
    met: ratio <= 1.1,
  }));
  if (a.count_check)
    goals.push({
      goal: 'attributed: ClickHouse count == accepted',
      tool: '—',
      measured: `${fmt(a.count_check.stored)} / ${fmt(a.count_check.accepted)}`,
      met: a.count_check.exact,
    });
  if (a.registry) {
    const g = a.registry;
    goals.push({
      goal: 'customer registry ≤ 200 bytes/customer',
      tool: `${fmt(g.customers)} customers`,
      measured: `${fmt(g.bytes_per_customer)} bytes`,
      met: g.bytes_per_customer <= 200 && g.customers >= 1_000_000,
    });
    goals.push({
      goal: 'api start ≤ 10 s with 1 M customers',
      tool: `${fmt(g.customers)} customers`,
      measured: `${fmt(g.api_start_s, 2)} s`,
      met: g.api_start_s <= 10 && g.customers >= 1_000_000,
    });
  }
  return goals;
}

/** Where each ingest phase's CPU went, per accepted record and process group, beside the ceiling's per request. */
function costLines(r: BenchReport): string[] {
  const ingest = r.phases.filter((p) => p.pipeline);
  if (!ingest.length) return [];
  const rows = [
    [
      'pipeline cost (load + drain + merges)',
      'tool',
      'records',
      'drain s',
      'merges s',
      'µs/record',
      ...PIPELINE_GROUPS.map((g) => `${g} µs`),
      '× ceiling µs/req',
    ],
  ];
  for (const p of ingest) {
    const c = p.pipeline!;
    const ceiling = r.phases.find((x) => x.phase === 'ceiling' && x.tool === p.tool)?.server_cpu_us_per_request ?? NaN;
    rows.push([
      p.phase,
      p.tool,
      fmt(c.records),
      fmt(c.drain_s, 1),
      fmt(c.merge_s ?? NaN, 1),
      fmt(c.us_per_record, 2),
      ...PIPELINE_GROUPS.map((g) => fmt(c.us_per_record_by_group[g] ?? NaN, 2)),
      fmt((c.us_per_record * p.records_per_request) / ceiling, 2),
    ]);
  }
  for (const p of r.phases.filter((x) => x.phase === 'ceiling'))
    rows.push([
      `ceiling (bare uWS, per request)`,
      p.tool,
      fmt(p.requests),
      '—',
      '—',
      fmt(p.server_cpu_us_per_request, 2),
      ...PIPELINE_GROUPS.map(() => '—'),
      '1.00',
    ]);
  return ['', table(rows), ''];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
    .join('\n');
}

export function printReport(r: BenchReport): void {
  r.goals = goalsOf(r);
  const ceilingOf = (tool: string) =>
    r.phases.find((p) => p.phase === 'ceiling' && p.tool === tool)?.requests_per_s ?? NaN;
  const rows = [
    [
      'phase',
      'tool',
      'req/s',
      'records/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'non-2xx',
      'errors',
      '× ceiling',
      '× 10k goal',
      'rec/msg',
      'server µs/req',
      'cores: api|ceil / consumer / nats / clickhouse / loadgen',
    ],
  ];
  for (const p of r.phases) {
    const c = p.cpu_cores;
    rows.push([
      p.phase,
      p.tool,
      fmt(p.requests_per_s),
      p.records_per_request ? fmt(p.records_per_s) : '—',
      fmt(p.latency_p50_ms, 2),
      fmt(p.latency_p99_ms, 2),
      fmt(p.latency_max_ms, 1),
      fmt(p.non_2xx),
      fmt(p.errors),
      p.phase === 'ceiling' ? '1.00' : p.goal_ratio !== undefined ? '—' : fmt(p.requests_per_s / ceilingOf(p.tool), 2),
      p.goal_ratio === undefined ? '—' : fmt(p.goal_ratio, 3),
      p.records_per_message === undefined ? '—' : fmt(p.records_per_message, 1),
      fmt(p.server_cpu_us_per_request),
      [p.phase === 'ceiling' ? c.ceiling : c.api, c.consumer, c.nats, c.clickhouse, c.load_generator]
        .map((x) => fmt(x ?? NaN, 2))
        .join(' / '),
    ]);
  }
  const out = [
    '',
    `meterline benchmark — ${r.started_at} — ${r.machine.cpus} × ${r.machine.cpu_model}, Node ${r.machine.node}, load average before: ${r.machine.loadavg_before.join(' ')}`,
    `options: ${JSON.stringify(r.options)}`,
    '',
    table(rows),
    '',
    ...r.phases
      .filter((p) => p.usage_records !== undefined)
      .map(
        (p) =>
          `get-usage ${p.tool}: the meter holds ${fmt(p.usage_records!)} records (${fmt(p.usage_raw_rows ?? NaN)} raw rows); one request alone took ${fmt(p.usage_query_alone_ms ?? NaN)} ms before the load`,
      ),
    r.lag
      ? `ingest → queryable (${r.lag.seen}/${r.lag.probes} probes, poll ${r.lag.poll_ms} ms): p50 ${fmt(r.lag.p50_ms)} ms, p99 ${fmt(r.lag.p99_ms)} ms, max ${fmt(r.lag.max_ms)} ms`
      : '',
    ...costLines(r),
    r.count_check
      ? `count check: ${fmt(r.count_check.accepted)} records accepted (202), ${fmt(r.count_check.stored)} in ClickHouse after dedup (${fmt(r.count_check.raw_rows)} raw rows) → ${r.count_check.exact ? 'EXACT' : 'MISMATCH'}; drained ${fmt(r.count_check.drain_seconds_after_load, 1)} s after the load`
      : '',
    ...(r.billing_run ? billingRunLines(r.billing_run) : []),
    ...(r.billing_run_mix ? billingRunLines(r.billing_run_mix) : []),
    ...(r.billing_run_periods ? billingRunLines(r.billing_run_periods) : []),
    ...(r.stripe_billing ? stripeBillingLines(r.stripe_billing) : []),
    ...(r.group_by_reads ? dimensionReadLines(r.group_by_reads) : []),
    ...(r.unique_counts ? dimensionReadLines(r.unique_counts) : []),
    ...(r.emitter ? emitterLines(r.emitter) : []),
    ...(r.attributed ? attributedLines(r.attributed) : []),
    ...(r.ingest_shapes ? ingestShapesLines(r.ingest_shapes, r.usage_query?.ms) : []),
    ...(r.retry_identity ? retryIdentityLines(r.retry_identity) : []),
    ...(r.hot_read ? hotReadLines(r.hot_read) : []),
    '',
    table([
      ['goal (docs/design.md §11)', 'tool', 'measured', 'met'],
      ...r.goals.map((g) => [g.goal, g.tool, g.measured, g.met ? 'yes' : 'NO']),
    ]),
    '',
  ];
  process.stdout.write(out.join('\n') + '\n');
}
