/**
 * Entitlements in the benchmark (issue 28), phase `entitlement-check` (opt-in, `--phases entitlement-check`):
 * - set-up: the operator, deployment meter and --entitlement-customers (10,000) customers of the `attributed`
 *   phase's set-up (bench/phases/attributed.ts), and one metered `block` entitlement per customer, inserted straight
 *   into Postgres (the table's version trigger tells every api to reload);
 * - the load: GET /v1/entitlements/check for every customer in turn (wrk, one thread, --connections; autocannon
 *   when wrk is missing or --no-wrk) while batched records for those customers are ingested beside it — an open
 *   loop (bench/open-loop.ts) offering --entitlement-ingest-rate records/s (100,000, the load) — checks/s
 *   and latency (goal ≥ 20,000/s, p99 ≤ 5 ms). wrk, because on 2 cores autocannon's workers took more CPU than
 *   the checks they sent;
 * - the floor: the same check load sent to the bench's ceiling server (bare uWS: read, JSON.parse, answer) beside
 *   the same ingest — what any HTTP answer achieves on this machine while it ingests that much;
 *   Not with `attributed` in the same run (both make the same customers).
 * - freshness: meanwhile probes send one record for a customer and poll its check until the usage shows it:
 *   the time from the record's 202 to the first check reflecting it (goal p99 ≤ 2 s).
 */
import { createRequire } from 'node:module';
import pg from 'pg';
import { newId } from '../../shared/ids.js';
import { hasWrk, runWrk, type LoadResult } from '../load.js';
import { runOpenLoop } from '../open-loop.js';
import { arg, opts } from '../options.js';
import type { BenchWorld } from '../world.js';
import { prepareAttributed } from './attributed.js';

export interface EntitlementCheckResult {
  customers: number;
  checks: LoadResult;
  /** The ingest that ran beside the checks: offered and accepted records/s. */
  ingest: IngestBeside;
  /** The same check load sent to the ceiling server beside the same ingest (wrk only): the machine's floor. */
  ceiling_beside_ingest?: { checks: LoadResult; ingest: IngestBeside };
  /** 202 → first check showing the record, ms. */
  freshness: { samples: number; p50_ms: number; p99_ms: number; max_ms: number };
}

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: object) => Promise<{
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}>;

interface IngestBeside {
  offered_records_per_s: number;
  records_per_s: number;
  /** Requests answered other than 202, and requests not sent because 512 were outstanding. */
  non_2xx: number;
  behind: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! : NaN;

export async function runEntitlementCheckPhase(where: {
  world: BenchWorld;
  apiUrl: string;
  /** The ceiling server's base URL, for the floor round. */
  ceilingUrl: string;
  log: (m: string) => void;
}): Promise<EntitlementCheckResult> {
  // The load's shape: the run's options (bench/options.ts) and this phase's own.
  const o = {
    ...where,
    customers: arg('entitlement-customers', 10_000),
    /** Records/s offered beside the checks. */
    ingestRate: arg('entitlement-ingest-rate', 100_000),
    batch: opts.batch,
    seconds: opts.seconds,
    connections: opts.connections,
    threads: opts.threads,
    /** Load with wrk when it is installed. */
    wrk: opts.wrk,
  };
  const timestamp = new Date().toISOString();
  const setup = await prepareAttributed(o.world, o.apiUrl, { customers: o.customers, batch: o.batch, timestamp });
  const pool = new pg.Pool({ connectionString: o.world.config.DATABASE_URL, max: 2 });
  let externalIds: string[];
  try {
    const { rows } = await pool.query<{ id: string; external_id: string }>(
      `SELECT id, external_id FROM accounts WHERE external_id LIKE 'bench-customer-%' ORDER BY external_id`,
    );
    externalIds = rows.map((r) => r.external_id);
    await pool.query(
      `INSERT INTO entitlements (id, account_id, feature, type, meter_id, "limit", period, overage)
       SELECT i, a, 'bench.calls', 'metered', $3, 1000000000, 'month', 'block' FROM unnest($1::text[], $2::text[]) AS x(i, a)`,
      [rows.map(() => newId('ent')), rows.map((r) => r.id), setup.meterId],
    );
  } finally {
    await pool.end();
  }
  const headers = { authorization: `Bearer ${setup.adminToken}` };
  const checkOf = async (customer: string) => {
    const r = await fetch(`${o.apiUrl}/v1/entitlements/check?feature=bench.calls&customer=${customer}`, { headers });
    return (await r.json()) as { usage?: number; has_access: boolean };
  };
  for (let tries = 0; !(await checkOf(externalIds.at(-1)!)).has_access; tries++) {
    if (tries > 600) throw new Error('the api never loaded the entitlements');
    await new Promise((r) => setTimeout(r, 100));
  }
  o.log(`entitlement-check: ${externalIds.length} customers with an entitlement each`);

  // Freshness probes: three customers, one record at a time, each timed from its 202 to the check showing it.
  const samples: number[] = [];
  let probing = true;
  const probe = async (customer: string) => {
    let expected = (await checkOf(customer)).usage ?? 0;
    while (probing) {
      const r = await fetch(`${o.apiUrl}/v1/meters/${setup.meterId}/usage`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ value: 1, timestamp: new Date().toISOString(), customer }),
      });
      await r.arrayBuffer();
      if (r.status !== 202) continue;
      const accepted = performance.now();
      expected += 1;
      while ((await checkOf(customer)).usage! < expected) await new Promise((res) => setTimeout(res, 10));
      samples.push(performance.now() - accepted);
    }
  };
  // The probes' customers are not among the ingest's: their usage moves only by the probes' records.
  const probeCustomers = externalIds.slice(-3);
  const ingested = setup.bodies.slice(0, -1);
  const probes = probeCustomers.map(probe);
  const checkPath = (c: string) => `/v1/entitlements/check?feature=bench.calls&customer=${c}`;
  const useWrk = o.wrk && (await hasWrk());
  const ingestBeside = async (): Promise<IngestBeside> => {
    const r = await runOpenLoop({
      url: `${o.apiUrl}/v1/meters/${setup.meterId}/usage`,
      headers: { ...headers, 'content-type': 'application/json' },
      bodies: ingested,
      requestsPerS: o.ingestRate / o.batch,
      seconds: o.seconds,
    });
    return {
      offered_records_per_s: o.ingestRate,
      records_per_s: Math.round((r.accepted * o.batch) / o.seconds),
      non_2xx: r.refused,
      behind: r.behind,
    };
  };
  const [checks, ingest] = await Promise.all([
    useWrk
      ? runWrk({
          url: o.apiUrl,
          method: 'GET',
          body: '',
          paths: externalIds.map(checkPath),
          headers,
          connections: o.connections,
          seconds: o.seconds,
          threads: 1,
        })
      : autocannon({
          url: o.apiUrl,
          connections: o.connections,
          duration: o.seconds,
          workers: o.threads,
          headers,
          // Every 10th customer: autocannon prepares each connection's whole request list, and 64 × 10,000 of
          // them cost the load generator more than the checks cost the api. The table holds all 10,000.
          requests: externalIds.filter((_, i) => i % 10 === 0).map((c) => ({ method: 'GET', path: checkPath(c) })),
        }).then(
          (r): LoadResult => ({
            tool: 'autocannon',
            requests: r.requests.total,
            requests_per_s: r.requests.average,
            latency_p50_ms: r.latency.p50,
            latency_p99_ms: r.latency.p99,
            latency_max_ms: r.latency.max,
            non_2xx: r.non2xx,
            errors: r.errors + r.timeouts,
            duration_s: r.duration,
          }),
        ),
    ingestBeside(),
  ]);
  probing = false;
  await Promise.all(probes);
  // The floor: the ceiling server answering the same check load beside the same ingest.
  const ceiling = useWrk
    ? await Promise.all([
        runWrk({
          url: o.ceilingUrl,
          method: 'POST',
          body: '{}',
          headers: { 'content-type': 'application/json' },
          connections: o.connections,
          seconds: o.seconds,
          threads: 1,
        }),
        ingestBeside(),
      ])
    : null;
  const sorted = [...samples].sort((a, b) => a - b);
  const result: EntitlementCheckResult = {
    customers: externalIds.length,
    checks,
    ingest,
    ...(ceiling ? { ceiling_beside_ingest: { checks: ceiling[0], ingest: ceiling[1] } } : {}),
    freshness: {
      samples: sorted.length,
      p50_ms: Math.round(percentile(sorted, 0.5)),
      p99_ms: Math.round(percentile(sorted, 0.99)),
      max_ms: Math.round(sorted.at(-1) ?? NaN),
    },
  };
  o.log(`entitlement-check: ${JSON.stringify(result)}`);
  return result;
}

/** The phase's goals for the report. */
export function entitlementCheckGoals(r: EntitlementCheckResult) {
  const floor = r.ceiling_beside_ingest;
  return [
    {
      goal: `entitlement checks ≥ 20,000/s while ingesting ${r.ingest.offered_records_per_s.toLocaleString('en-US')} records/s`,
      tool: `${r.customers} customers`,
      measured: `${Math.round(r.checks.requests_per_s)}/s (ingest ${Math.round(r.ingest.records_per_s)}/s accepted)`,
      met: r.checks.requests_per_s >= 20_000 && r.checks.non_2xx === 0,
    },
    {
      goal: 'entitlement check p99 ≤ 5 ms',
      tool: r.checks.tool,
      measured: `${r.checks.latency_p99_ms} ms`,
      met: r.checks.latency_p99_ms <= 5,
    },
    ...(floor
      ? [
          {
            goal: 'floor: the bare uWS ceiling server, same load beside the same ingest, ≥ 20,000/s and p99 ≤ 5 ms',
            tool: floor.checks.tool,
            measured: `${Math.round(floor.checks.requests_per_s)}/s, p99 ${floor.checks.latency_p99_ms} ms (ingest ${Math.round(floor.ingest.records_per_s)}/s accepted)`,
            met: floor.checks.requests_per_s >= 20_000 && floor.checks.latency_p99_ms <= 5,
          },
        ]
      : []),
    {
      goal: 'record 202 → check reflects it, p99 ≤ 2 s',
      tool: `${r.freshness.samples} probes`,
      measured: `${r.freshness.p99_ms} ms`,
      met: r.freshness.p99_ms <= 2000,
    },
  ];
}
