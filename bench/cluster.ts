/**
 * Bench phase `cluster` (`npm run bench:cluster`): the same loads against the single topology and the local
 * cluster (METERLINE_TOPOLOGY=cluster: NATS R3, ClickHouse 2 shards × 2 replicas, two processes per role),
 * started one after the other on this machine, each from `meterline up` in its own temporary root. Reports
 * each topology's figures and the cluster/single ratios, plus the JetStream publish p99 (R1 vs R3). On one
 * shared 2-core machine the cluster cannot be faster: the ratios are the price of replication.
 */
import { writeFile, mkdir } from 'node:fs/promises';
import { repoPath } from '../shared/paths.js';
import { startLocalCluster, type LocalCluster } from '../test/fixtures/cluster.js';
import { createTestAccount } from '../test/fixtures/auth.js';
import { MeterlineClient } from '../shared/client/index.js';
import { waitUntil } from '../test/fixtures/env.js';
import { storedCount, waitForMeterEverywhere } from '../test/e2e/cluster-helpers.js';
import { runAutocannon, type LoadResult } from './load.js';
import { CpuMeter } from './cpu.js';
import { createClickhouse } from '../shared/clients/clickhouse.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 ? Number(process.argv[i + 1]) : fallback;
};
const opts = {
  seconds: arg('seconds', 10),
  connections: arg('connections', 32),
  batch: arg('batch', 100),
  threads: arg('threads', 1),
};
const log = (m: string) => process.stderr.write(`[bench:cluster] ${m}\n`);

type Topology = 'single' | 'cluster';
interface Figures {
  topology: Topology;
  phases: Record<
    string,
    Pick<LoadResult, 'requests_per_s' | 'latency_p50_ms' | 'latency_p99_ms' | 'non_2xx' | 'errors'> & {
      records_per_s?: number;
      cpu_cores: Record<string, number>;
    }
  >;
  /** Compressed bytes on disk per record, per copy (each replica holds one copy). */
  bytes_per_record: number | null;
  /** Upper bound of the histogram bucket holding the 99th percentile of JetStream publish → ack, one api process. */
  publish_p99_ms_at_most: number | null;
  accepted: number;
  counted: number;
  /** Batches with client ids into one account (claimed: services/domain/usage/claim-lock.ts): idsLoad. */
  ids?: IdsFigures;
}

interface IdsFigures {
  records_per_s: number;
  /** From the end of the load until ClickHouse held every accepted record. */
  drain_s: number;
  /** The consumers' rate over load and drain: accepted / (load + drain). */
  stored_per_s: number;
  accepted: number;
  stored: number;
}

/**
 * Closed loops sending batches whose records carry fresh client ids into one meter of one account: every record
 * is claimed, and with two consumer processes (the cluster) they take turns on that account's claim lock. Reports
 * how fast it was accepted and how long the consumers took to store it all.
 */
async function idsLoad(c: LocalCluster, token: string, meterId: string): Promise<IdsFigures> {
  const url = `${c.base}/v1/meters/${meterId}/usage`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const loops = Math.max(1, Math.floor(opts.connections / 4));
  const ts = new Date(Date.now() - 60_000).toISOString();
  const until = performance.now() + opts.seconds * 1000;
  let next = 0;
  let accepted = 0;
  const loop = async () => {
    while (performance.now() < until) {
      const from = next;
      next += opts.batch;
      const body = JSON.stringify(
        Array.from({ length: opts.batch }, (_, i) => ({ id: `b-${from + i}`, value: 1, timestamp: ts })),
      );
      for (;;) {
        const r = await fetch(url, { method: 'POST', headers, body }).catch(() => null);
        await r?.arrayBuffer();
        if (r?.status === 202) break;
      }
      accepted += opts.batch;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: loops }, loop));
  const loadS = (performance.now() - t0) / 1000;
  const drained = performance.now();
  await waitUntil(
    async () => (await storedCount(c, meterId)).records >= accepted,
    'ClickHouse to hold every record with an id',
    600_000,
    250,
  );
  const drainS = (performance.now() - drained) / 1000;
  const stored = (await storedCount(c, meterId)).records;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    records_per_s: Math.round(accepted / loadS),
    drain_s: round(drainS),
    stored_per_s: Math.round(accepted / (loadS + drainS)),
    accepted,
    stored,
  };
}

/** The p99 bucket bound of a Prometheus histogram in /metrics text. */
export function histogramP99(text: string, metric: string): number | null {
  // Read line by line with indexOf: a regex over label lists backtracks polynomially (test/unit/safe-regex.test.ts).
  const buckets: (readonly [number, number])[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}_bucket{`)) continue;
    const close = line.lastIndexOf('} ');
    const le = line.indexOf('le="');
    if (close < 0 || le < 0 || le > close) continue;
    buckets.push([Number(line.slice(le + 4, line.indexOf('"', le + 4))), Number(line.slice(close + 2))] as const);
  }
  const total = buckets.find(([le]) => Number.isNaN(le))?.[1] ?? 0; // le="+Inf"
  if (!total) return null;
  const hit = buckets.filter(([le]) => !Number.isNaN(le)).find(([, n]) => n >= 0.99 * total);
  return hit ? hit[0] * 1000 : null;
}

/** Active parts' bytes of the raw table over every server (merged or not: the ids are unique), per stored copy of a record. */
async function bytesPerRecord(urls: string, table: string, records: number): Promise<number | null> {
  let bytes = 0;
  let rows = 0;
  for (const url of urls.split(',')) {
    const ch = createClickhouse(url);
    try {
      const rs = await ch.query({
        query: `SELECT sum(bytes_on_disk) AS b, sum(rows) AS r FROM system.parts WHERE database = 'meterline' AND table = '${table}' AND active`,
        format: 'JSONEachRow',
      });
      const [row] = await rs.json<{ b: string; r: string }>();
      bytes += Number(row?.b ?? 0);
      rows += Number(row?.r ?? 0);
    } finally {
      await ch.close();
    }
  }
  return rows && records ? Math.round((bytes / rows) * 10) / 10 : null;
}

async function measure(topology: Topology): Promise<Figures> {
  const teardowns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.unshift(fn) };
  try {
    log(`${topology}: starting`);
    const c = await startLocalCluster(t, { LOG_LEVEL: 'error' }, topology);
    const account = await createTestAccount(c.infra);
    const { id: meterId } = await new MeterlineClient({ baseUrl: c.base, token: account.tokens.write }).createMeter({
      name: 'bench',
      unit: 'call',
      type: 'counter',
      aggregation: 'sum',
    });
    await waitForMeterEverywhere(c.base, account.tokens.write, meterId);
    const ts = new Date(Date.now() - 60_000).toISOString();
    const url = `${c.base}/v1/meters/${meterId}/usage`;
    const write = { 'content-type': 'application/json', authorization: `Bearer ${account.tokens.write}` };
    const read = { authorization: `Bearer ${account.tokens.read}` };
    const loads = [
      {
        name: 'single',
        method: 'POST' as const,
        body: JSON.stringify({ value: 1, timestamp: ts }),
        headers: write,
        records: 1,
      },
      {
        name: 'batched',
        method: 'POST' as const,
        body: JSON.stringify(Array.from({ length: opts.batch }, () => ({ value: 1, timestamp: ts }))),
        headers: write,
        records: opts.batch,
      },
      { name: 'get-usage', method: 'GET' as const, body: '', headers: read, records: 0, url: `${url}?window=day` },
    ];
    const figures: Figures = {
      topology,
      phases: {},
      publish_p99_ms_at_most: null,
      accepted: 0,
      counted: 0,
      bytes_per_record: null,
    };
    const pids: Record<string, number[]> = {};
    for (const p of await c.processes()) (pids[p.kind] ??= []).push(p.pid);
    const cpu = new CpuMeter(() => pids);
    for (const l of loads) {
      cpu.begin();
      const r = await runAutocannon({
        url: l.url ?? url,
        method: l.method,
        body: l.body,
        headers: l.headers,
        connections: opts.connections,
        seconds: opts.seconds,
        threads: opts.threads,
        timeoutSeconds: 30,
      });
      const ok = r.requests - r.non_2xx;
      figures.accepted += ok * l.records;
      const cores = Object.fromEntries(Object.entries(cpu.end()).filter(([k]) => !k.endsWith('_kernel')));
      figures.phases[l.name] = {
        requests_per_s: r.requests_per_s,
        latency_p50_ms: r.latency_p50_ms,
        latency_p99_ms: r.latency_p99_ms,
        non_2xx: r.non_2xx,
        errors: r.errors,
        cpu_cores: cores,
        ...(l.records ? { records_per_s: (ok * l.records) / r.duration_s } : {}),
      };
      log(
        `${topology} ${l.name}: ${Math.round(r.requests_per_s)} req/s, p99 ${r.latency_p99_ms} ms, non-2xx ${r.non_2xx}, errors ${r.errors}`,
      );
    }
    const metrics = await fetch(`${c.base}/metrics`).then((r) => r.text());
    figures.publish_p99_ms_at_most = histogramP99(metrics, 'meterline_usage_publish_seconds');
    // Every accepted record counted once (autocannon's 2xx × records per request).
    await waitUntil(
      async () => (await storedCount(c, meterId)).records >= figures.accepted,
      'ClickHouse to hold every accepted record',
      300_000,
      500,
    );
    figures.counted = (await storedCount(c, meterId)).records;
    figures.bytes_per_record = await bytesPerRecord(
      c.config.CLICKHOUSE_URL,
      topology === 'cluster' ? 'usage_records_local' : 'usage_records',
      figures.counted,
    );
    // autocannon stops with up to `connections` requests in flight: accepted by the server, not counted as 2xx here.
    const inFlight = opts.connections * (1 + opts.batch); // the single phase and the batched one
    if (figures.counted < figures.accepted || figures.counted > figures.accepted + inFlight)
      throw new Error(
        `${topology}: counted ${figures.counted}, 2xx records ${figures.accepted} (+ at most ${inFlight} in flight)`,
      );
    log(
      `${topology}: 2xx records ${figures.accepted} (+ ≤ ${inFlight} in flight at the end), counted ${figures.counted}, ${figures.bytes_per_record} bytes/record, publish p99 ≤ ${figures.publish_p99_ms_at_most} ms`,
    );
    const idsMeter = await new MeterlineClient({ baseUrl: c.base, token: account.tokens.write }).createMeter({
      name: 'bench ids',
      unit: 'call',
      type: 'counter',
      aggregation: 'sum',
    });
    await waitForMeterEverywhere(c.base, account.tokens.write, idsMeter.id);
    figures.ids = await idsLoad(c, account.tokens.write, idsMeter.id);
    if (figures.ids.stored !== figures.ids.accepted)
      throw new Error(`${topology}: ids stored ${figures.ids.stored}, accepted ${figures.ids.accepted}`);
    log(`${topology} ids: ${JSON.stringify(figures.ids)}`);
    return figures;
  } finally {
    for (const fn of teardowns) await fn();
  }
}

async function main(): Promise<void> {
  const single = await measure('single');
  const cluster = await measure('cluster');
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? Math.round((a / b) * 100) / 100 : null);
  const ratios = Object.fromEntries(
    Object.keys(single.phases).map((p) => [
      p,
      {
        throughput: ratio(cluster.phases[p]?.requests_per_s, single.phases[p]?.requests_per_s),
        p99: ratio(cluster.phases[p]?.latency_p99_ms, single.phases[p]?.latency_p99_ms),
      },
    ]),
  );
  const report = {
    phase: 'cluster',
    started_at: new Date().toISOString(),
    options: opts,
    single,
    cluster,
    ratios_cluster_over_single: ratios,
  };
  const dir = repoPath('bench/results');
  await mkdir(dir, { recursive: true });
  const file = `${dir}/${new Date().toISOString().replace(/[:.]/g, '-')}-cluster.json`;
  await writeFile(file, JSON.stringify(report, null, 2) + '\n');
  for (const [p, r] of Object.entries(ratios)) log(`cluster/single ${p}: throughput × ${r.throughput}, p99 × ${r.p99}`);
  log(
    `publish p99: single ≤ ${single.publish_p99_ms_at_most} ms (R1), cluster ≤ ${cluster.publish_p99_ms_at_most} ms (R3)`,
  );
  log(`exact counts: single ${single.counted}/${single.accepted}, cluster ${cluster.counted}/${cluster.accepted}`);
  log(`written ${file}`);
  process.stdout.write(JSON.stringify(report) + '\n');
}

if (process.argv[1]?.endsWith('cluster.js'))
  main().catch((err) => {
    process.stderr.write(`[bench:cluster] failed: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  });
