/**
 * Retries counted once by default (issue 45 item 3), phase `retry-identity`: what the default identity window
 * (services/domain/usage/claim-lock.ts) costs per record, against plain live records in the same run. Three
 * variants of --identity-records (1 M) records each, --batch-record requests from --connections closed loops in
 * the bench process (ids made per request), every record in the current minute, each to a meter of its own:
 * - `live`: no ids (server-assigned `use_…`, never claimed) — the plain live phase;
 * - `ids`: every record with a fresh client id (each claimed, no lookup);
 * - `retry`: 20 % of each request's records re-send ids of the loop's previous request with a new timestamp
 *   (looked up, left out), the rest fresh.
 * For each: the pipeline's CPU per accepted record (api + NATS + consumer + ClickHouse, from the start of the load
 * until every row is stored, its hours settled and ClickHouse's merges idle: bench/pipeline-cost.ts), and
 * whether exactly the distinct ids were stored. Ratios against `live`. Run with the consumer's default
 * USAGE_IDENTITY (window); run the bench again with USAGE_IDENTITY=timestamp for the cost without claims.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { CpuMeter } from '../cpu.js';
import {
  pipelineCost,
  storedRowCount,
  waitForMergesIdle,
  waitForMeterSettled,
  waitForQuiet,
  waitForRows,
  type PipelineCost,
} from '../pipeline-cost.js';
import { addBenchMeter, type BenchWorld } from '../world.js';
import { arg, opts } from '../options.js';

const round2 = (x: number) => Math.round(x * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Variant = 'live' | 'ids' | 'retry';
const RETRY_SHARE: Record<Variant, number> = { live: 0, ids: 0, retry: 0.2 };

export interface IdentityVariantRun {
  variant: Variant;
  /** Which round of --identity-rounds (from 1). */
  round: number;
  records: number;
  accepted_per_s: number;
  /** Answers other than 202 (each request sent again until accepted). */
  refused: number;
  /** Records the meter must hold: every record (live), or the distinct ids accepted. */
  expected_rows: number;
  stored_rows: number;
  exact: boolean;
  pipeline: PipelineCost;
}

export interface RetryIdentityResult {
  records_target: number;
  identity: string;
  variants: IdentityVariantRun[];
  /** CPU per record against `live`, same run: the median of the rounds' ratios. */
  ratios: Partial<Record<'ids' | 'retry', number>>;
  /** Each round's ratios (its variants against its own `live`). */
  rounds: Partial<Record<'ids' | 'retry', number>>[];
}

export interface RetryIdentityRun {
  world: BenchWorld;
  apiPort: number;
  ch: ClickHouseClient;
  cpu: CpuMeter;
  log: (m: string) => void;
  acceptedRecords: () => Promise<number>;
}

/**
 * The body of worker `w`'s request `k`: its first `retries` records re-send ids `retries … 2·retries − 1` of the
 * worker's request k − 1 (fresh there) at another timestamp, the others are fresh ids; no ids for `live`.
 */
function bodyOf(variant: Variant, batch: number, retries: number, nonce: string, now: number) {
  const ts1 = new Date(now - 2000).toISOString();
  const ts2 = new Date(now - 1000).toISOString();
  const plain = JSON.stringify(Array.from({ length: batch }, (_, i) => ({ value: (i % 10) + 1, timestamp: ts1 })));
  return (w: number, k: number): string => {
    if (variant === 'live') return plain;
    const recs = Array.from({ length: batch }, (_, i) =>
      k > 0 && i < retries
        ? { id: `${nonce}-${w}-${k - 1}-${i + retries}`, value: (i % 10) + 1, timestamp: ts2 }
        : { id: `${nonce}-${w}-${k}-${i}`, value: (i % 10) + 1, timestamp: ts1 },
    );
    return JSON.stringify(recs);
  };
}

/**
 * `requests` POSTs from `workers` closed loops (keep-alive fetch, in this process: its CPU is the load generator's,
 * not the pipeline's); a refused request (503 under load) is sent again, as a client would, so every body counts.
 */
async function closedLoop(
  url: string,
  headers: Record<string, string>,
  requests: number,
  workers: number,
  body: (w: number, k: number) => string,
) {
  let refused = 0;
  const perWorker = Math.ceil(requests / workers);
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let k = 0; k < perWorker; k++) {
        const b = body(w, k);
        for (let attempt = 0; ; attempt++) {
          const res = await fetch(url, { method: 'POST', headers, body: b });
          await res.arrayBuffer();
          if (res.status === 202) break;
          refused++;
          if (attempt === 20) throw new Error(`request refused 20 times: ${res.status}`);
          await sleep(200);
        }
      }
    }),
  );
  return { refused, requests: perWorker * workers };
}

async function storedOf(ch: ClickHouseClient, meterId: string): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM usage_records FINAL WHERE meter_id = '${meterId}'`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

async function runVariant(
  r: RetryIdentityRun,
  variant: Variant,
  records: number,
  round: number,
): Promise<IdentityVariantRun> {
  const batch = opts.batch;
  const retries = Math.floor(batch * RETRY_SHARE[variant]);
  const meterId = await addBenchMeter(r.world, `bench identity ${variant}`, {});
  // The earlier phases' (or variants') hours recomputed and merges done first, as every counted phase waits
  // (bench/run.ts): a run after 27 M batched records charged the first variant a settle of theirs.
  await waitForQuiet(r.ch, 600_000);
  const now = Date.now();
  const before = await r.acceptedRecords();
  const storedBefore = await storedRowCount(r.ch);
  const workers = opts.connections;
  r.cpu.begin();
  const t0 = performance.now();
  const load = await closedLoop(
    `http://127.0.0.1:${r.apiPort}/v1/meters/${meterId}/usage`,
    { 'content-type': 'application/json', authorization: `Bearer ${r.world.token}` },
    Math.ceil(records / batch),
    workers,
    bodyOf(variant, batch, retries, `${variant}${now}`, now),
  );
  const loadS = (performance.now() - t0) / 1000;
  const accepted = (await r.acceptedRecords()) - before;
  // Each worker's first request has no retries: distinct ids = requests × (batch − retries) + workers × retries.
  const expected = variant === 'live' ? accepted : load.requests * (batch - retries) + workers * retries;
  await waitForRows(r.ch, storedBefore + expected, 10 * 60_000);
  await waitForMeterSettled(r.ch, meterId);
  const visibleS = (performance.now() - t0) / 1000;
  const mergeS = await waitForMergesIdle(r.ch);
  const cost = pipelineCost(r.cpu, accepted, visibleS + mergeS, visibleS - loadS, mergeS);
  r.cpu.end();
  const stored = await storedOf(r.ch, meterId);
  const run: IdentityVariantRun = {
    variant,
    round,
    records: accepted,
    accepted_per_s: Math.round(accepted / loadS),
    refused: load.refused,
    expected_rows: expected,
    stored_rows: stored,
    exact: stored === expected,
    pipeline: cost,
  };
  r.log(
    `retry-identity ${variant} (round ${round}): ${accepted} records at ${run.accepted_per_s}/s, ${stored} stored of ${expected} expected (${run.exact ? 'exact' : 'MISMATCH'}); ${cost.us_per_record} µs/record ${JSON.stringify(cost.us_per_record_by_group)}`,
  );
  return run;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * bench/run.ts's entry: `--phases retry-identity`, --identity-records (1 M per variant), --identity-rounds (1): the
 * three variants once per round, every other round in reverse order, so that what drifts during a run (ClickHouse's
 * merges, the tables' growth) falls on each variant alike; the ratios reported are the rounds' medians. One run's
 * ratio moves by more than the target's 15 % between quiet runs (docs/benchmarks.md).
 */
export async function runRetryIdentityPhase(r: RetryIdentityRun): Promise<RetryIdentityResult> {
  const records = arg('identity-records', 1_000_000);
  const rounds = Math.max(1, arg('identity-rounds', 1));
  const out: RetryIdentityResult = {
    records_target: records,
    identity: process.env.USAGE_IDENTITY ?? 'window',
    variants: [],
    ratios: {},
    rounds: [],
  };
  const order: Variant[] = ['live', 'ids', 'retry'];
  for (let round = 1; round <= rounds; round++) {
    const runs = new Map<Variant, IdentityVariantRun>();
    for (const v of round % 2 ? order : [...order].reverse()) runs.set(v, await runVariant(r, v, records, round));
    for (const v of order) out.variants.push(runs.get(v)!);
    const live = runs.get('live')!.pipeline.us_per_record;
    out.rounds.push({
      ids: round2(runs.get('ids')!.pipeline.us_per_record / live),
      retry: round2(runs.get('retry')!.pipeline.us_per_record / live),
    });
  }
  for (const v of ['ids', 'retry'] as const) out.ratios[v] = round2(median(out.rounds.map((x) => x[v]!)));
  return out;
}

export function retryIdentityLines(x: RetryIdentityResult): string[] {
  return [
    '',
    `retries counted once (issue 45), USAGE_IDENTITY=${x.identity}, ${x.records_target.toLocaleString('en-US')} records per variant:`,
    ...x.variants.map(
      (v) =>
        `  ${x.rounds.length > 1 ? `round ${v.round} ` : ''}${v.variant}: ${v.records.toLocaleString('en-US')} records at ${v.accepted_per_s.toLocaleString('en-US')}/s, ${v.exact ? 'exact' : `MISMATCH (${v.stored_rows} stored, ${v.expected_rows} expected)`}; ${v.pipeline.us_per_record} µs CPU/record ${JSON.stringify(v.pipeline.us_per_record_by_group)}`,
    ),
    `  vs live, CPU per record${x.rounds.length > 1 ? ` (median of ${x.rounds.length} rounds: ${x.rounds.map((q) => `× ${q.ids} / × ${q.retry}`).join(', ')})` : ''}: fresh ids × ${x.ratios.ids ?? '—'}, 20 % retries × ${x.ratios.retry ?? '—'} (target ≤ 1.15)`,
  ];
}
