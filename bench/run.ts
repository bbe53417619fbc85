/**
 * `npm run bench`: the docs/design.md §11 measurements in one run, on the local stack.
 *
 *   1. ceiling   — bench/ceiling-server.ts (bare uWS: read, JSON.parse, 202)
 *   2. single    — POST /v1/meters/{id}/usage, one record per request, fully durable (202 after the
 *                  JetStream ack; consumer and ClickHouse running)
 *   3. batched   — the same route, 100 records per request
 *   each with autocannon (worker threads) and with wrk when installed, the same connections and duration;
 *   then it waits until ClickHouse holds every accepted record and checks the count exactly.
 *   4. get-product — GET /v1/products/{id} (the world's product), against the 10k req/s goal
 *   control-reads (opt-in) — GET of a product, meter, plan, customer and an entitlement check (read caches)
 *   5. get-usage   — GET /v1/meters/{id}/usage?window=day of the load meter, over every record the
 *                    ingest phases stored (its cost grows with that count, reported alongside)
 * Every ingest phase also reports the pipeline's cost: CPU per accepted record of api + NATS + consumer +
 * ClickHouse (from /proc per process group, load and drain; bench/pipeline-cost.ts) beside the ceiling's CPU
 * per request. NATS and ClickHouse are private to the run (bench/private-servers.ts) unless --shared-servers.
 * Ingest → queryable lag is probed during phases 2 and 3. Results: a table on stdout and
 * bench/results/<timestamp>.json.
 *
 * Options and every phase with its flags: `--help` (bench/help.ts) and docs/benchmarks.md (a section per phase).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { stackUp } from '../infra/stack/stack.js';
import { REPO_ROOT, repoPath } from '../shared/paths.js';
import { createClickhouse } from '../shared/clients/clickhouse.js';
import { createWorld, type BenchWorld } from './world.js';
import { BENCH_PROCESSES, acceptedRecords, launch, launchRoles, storedMessages, type Proc } from './processes.js';
import { arg, opts } from './options.js';
import { hasWrk, runAutocannon, runWrk, type LoadResult, type LoadSpec } from './load.js';
import { LagProbe, type LagSummary } from './lag-probe.js';
import { prepareUsageReads } from './phases/usage-reads.js';
import { runStreamLoad } from './phases/stream.js';
import { runEmitterPhase } from './phases/emitter.js';
import { runAttributedPhase } from './phases/attributed.js';
import { runEntitlementCheckPhase } from './phases/entitlement-check.js';
import { runIngestShapesPhases } from './phases/backfill.js';
import { runRetryIdentityPhase } from './phases/retry-identity.js';
import { runOwnWorldPhases } from './own-world-phases.js';
import { runHotReadPhase } from './phases/hot-read.js';
import { helpAsked } from './help.js';
import { prepareControlReads } from './phases/control-reads.js';
import { CpuMeter } from './cpu.js';
import { startPrivateServers, type PrivateServers } from './private-servers.js';
import { benchPort as freePort } from './ports.js';
import {
  distinctCount,
  pipelineCost,
  rawRowCount,
  storedRowCount,
  waitForQuiet,
  waitForRows,
} from './pipeline-cost.js';
import { printReport, newReport, CONTROL_READ_GOAL, type PhaseResult, type BenchReport } from './report.js';

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { procs, resultsDir, runId } = BENCH_PROCESSES;

async function main(): Promise<void> {
  if (helpAsked()) return;
  // `cluster` starts two whole topologies of its own (bench/cluster.ts); it runs by itself with the same options.
  if (opts.phases.includes('cluster')) {
    const args = process.argv.slice(2).filter((a, i, all) => a !== '--phases' && all[i - 1] !== '--phases');
    const child = spawn(process.execPath, [new URL('./cluster.js', import.meta.url).pathname, ...args], {
      stdio: 'inherit',
    });
    process.exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    return;
  }
  const started = new Date();
  log(`options ${JSON.stringify(opts)}`);
  const stack = await stackUp({ root: REPO_ROOT, env: process.env, log });
  const streamBytes = arg('stream-gb', 2) * 1024 ** 3;
  // Private NATS and ClickHouse (bench/private-servers.ts), so their CPU time is this run's alone.
  const own: PrivateServers | undefined = opts.sharedServers ? undefined : await startPrivateServers(streamBytes);
  if (own) log(`private servers: nats ${own.natsPid}, clickhouse ${own.clickhousePid}`);
  const natsPid = own?.natsPid ?? stack.servers.find((s) => s.name === 'nats')?.pid ?? undefined;
  const chPid = own?.clickhousePid ?? stack.servers.find((s) => s.name === 'clickhouse')?.pid ?? undefined;
  const apiPort = await freePort();
  const ceilingPort = await freePort();
  const world: BenchWorld = await createWorld(
    {
      DATABASE_URL: stack.databaseUrl,
      NATS_URL: own?.natsUrl ?? stack.natsUrl,
      CLICKHOUSE_URL: own?.clickhouseUrl ?? stack.clickhouseUrl,
    },
    apiPort,
    streamBytes,
  ).catch(async (err) => {
    await own?.stop();
    throw err;
  });
  log(`world ${world.name}: account ${world.accountId}, meter ${world.meterId}`);
  const ch = createClickhouse(world.config.CLICKHOUSE_URL, world.config.CLICKHOUSE_DATABASE);
  const report: BenchReport = newReport(started, opts);
  try {
    const { ceilings, apis, consumers } = await launchRoles(world.env, ceilingPort, opts);
    // The ingest floor (bench/publish-floor-server.ts): counted in the api group, as it does the api's part.
    const floorPort = await freePort();
    const floors = opts.phases.some((p) => p.startsWith('publish-floor'))
      ? [
          await launch(
            'publish-floor-0',
            [
              ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}`] : []),
              repoPath('dist/bench/publish-floor-server.js'),
              String(floorPort),
              world.accountId,
              world.meterId,
            ],
            world.env,
          ),
        ]
      : [];
    log(`running: ${procs.map((p) => `${p.name}(${p.child.pid})`).join(' ')}`);
    const pidsOf = (ps: Proc[]) => ps.map((p) => p.child.pid!).filter(Boolean);
    let loadPids: number[] = [process.pid];
    const cpu = new CpuMeter(() => ({
      api: pidsOf([...apis, ...floors]),
      ceiling: pidsOf(ceilings),
      consumer: pidsOf(consumers),
      nats: natsPid ? [natsPid] : [],
      clickhouse: chPid ? [chPid] : [],
      load_generator: loadPids,
    }));

    const ts = new Date(Date.now() - 60_000).toISOString();
    const single = JSON.stringify({ value: 1, timestamp: ts });
    const batch = JSON.stringify(
      Array.from({ length: opts.batch }, (_, i) => ({ value: (i % 10) + 1, timestamp: ts })),
    );
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${world.token}` };
    const usageUrl = `http://127.0.0.1:${apiPort}/v1/meters/${world.meterId}/usage`;
    const ceilingUrl = `http://127.0.0.1:${ceilingPort}/v1/meters/${world.meterId}/usage`;
    // publish-floor's records timed 30 s before its phase, not at the run's start like single's: in single's second,
    // settling them re-read single's rows too, which single had not paid for (docs/benchmarks.md).
    const lately = (body: string) => body.replaceAll(ts, new Date(Date.now() - 30_000).toISOString());
    const floorUrl = `http://127.0.0.1:${floorPort}/v1/meters/${world.meterId}/usage`;
    const floorHeaders = { 'content-type': 'application/json' };
    const tools: ('autocannon' | 'wrk')[] = [];
    if (opts.autocannon) tools.push('autocannon');
    if (opts.wrk && (await hasWrk())) tools.push('wrk');
    else if (opts.wrk) log('wrk is not installed: autocannon only (apt-get install wrk)');

    const run = async (tool: 'autocannon' | 'wrk' | 'ws', spec: LoadSpec): Promise<LoadResult> => {
      if (tool === 'autocannon') return runAutocannon(spec);
      // The usage WebSocket: `body` is the records array every frame carries.
      if (tool === 'ws')
        return runStreamLoad({
          baseUrl: `http://127.0.0.1:${apiPort}`,
          token: world.token,
          recordsJson: spec.body,
          connections: opts.streamConnections,
          window: opts.streamWindow,
          seconds: spec.seconds,
        });
      return runWrk(spec); // wrk's CPU time lands in this process's cutime when it is reaped
    };
    let probe: LagProbe | undefined; // started after the ceiling phase
    const phase = async (
      name: PhaseResult['phase'],
      url: string,
      body: string,
      records: number,
      headers: Record<string, string>,
      method: 'GET' | 'POST' = 'POST',
      read?: { timeoutSeconds: number; extra?: () => Promise<Partial<PhaseResult>> },
      bodies?: string[],
      accepters: Proc[] = apis,
    ) => {
      for (const tool of name === 'stream' ? (['ws'] as const) : tools) {
        const spec: LoadSpec = {
          url,
          method,
          body,
          bodies,
          headers,
          connections: opts.connections,
          seconds: opts.seconds,
          threads: opts.threads,
          timeoutSeconds: read?.timeoutSeconds,
        };
        const extra = read?.extra ? await read.extra() : {};
        if (opts.warmupSeconds > 0) await run(tool, { ...spec, seconds: opts.warmupSeconds });
        await sleep(500);
        const counted =
          name === 'single' ||
          name.startsWith('publish-floor') ||
          name === 'batched' ||
          name === 'stream' ||
          name === 'attributed';
        // Earlier phases' rows stored, settled and merged before the window opens (bench/pipeline-cost.ts).
        if (counted) await probe?.pause(); // its reads are not the ingest's cost (bench/lag-probe.ts)
        if (counted) await waitForQuiet(ch);
        const before = counted ? await acceptedRecords(accepters) : 0;
        const messagesBefore = counted ? await storedMessages(accepters) : 0;
        const rowsBefore = counted ? await storedRowCount(ch) : 0;
        cpu.begin();
        const t0 = performance.now();
        const r = await run(tool, spec);
        const loadS = (performance.now() - t0) / 1000;
        const cores = cpu.end();
        const machineS = cpu.machineLessGeneratorSeconds();
        loadPids = [process.pid];
        const accepted = counted ? (await acceptedRecords(accepters)) - before : undefined;
        const messages = counted ? (await storedMessages(accepters)) - messagesBefore : undefined;
        // The pipeline's cost: CPU from the start of the load until ClickHouse holds what was accepted.
        const drainS = accepted !== undefined ? await waitForRows(ch, rowsBefore + accepted, 5 * 60_000) : 0;
        // …then its hours recomputed (the settler) and ClickHouse's merges done: both count as merges.
        const mergeS = accepted !== undefined ? await waitForQuiet(ch) : 0;
        const cost =
          accepted !== undefined ? pipelineCost(cpu, accepted, loadS + drainS + mergeS, drainS, mergeS) : undefined;
        probe?.resume();
        const result: PhaseResult = {
          phase: name,
          ...r,
          records_per_request: records,
          records_per_s: ((r.requests - r.non_2xx) * records) / r.duration_s,
          server_accepted_records: accepted,
          jetstream_messages: messages,
          records_per_message:
            accepted !== undefined && messages ? Math.round((accepted / messages) * 10) / 10 : undefined,
          cpu_cores: cores,
          server_cpu_us_per_request: Math.round(
            ((name === 'ceiling' ? cores.ceiling! : cores.api!) * 1e6) / r.requests_per_s,
          ),
          machine_us_per_request: Math.round((machineS * 1e7) / r.requests) / 10,
          pipeline: cost,
          ...(read ? { goal_ratio: r.requests_per_s / CONTROL_READ_GOAL } : {}),
          ...extra,
        };
        report.phases.push(result);
        log(
          `${name} ${tool}: ${Math.round(r.requests_per_s)} req/s, p50 ${r.latency_p50_ms} ms, p99 ${r.latency_p99_ms} ms, non-2xx ${r.non_2xx}, errors ${r.errors}, records/message ${result.records_per_message ?? '—'}, cpu ${JSON.stringify(cores)}${cost ? `, pipeline ${cost.us_per_record} µs/record ${JSON.stringify(cost.us_per_record_by_group)}` : ''}`,
        );
        await sleep(1000);
      }
    };

    if (opts.phases.includes('ceiling')) await phase('ceiling', ceilingUrl, single, 1, auth);
    probe = new LagProbe(`http://127.0.0.1:${apiPort}`, world.token, world.probeMeterId);
    probe.start();
    // Diagnostic (opt-in): the same request to a meter that doesn't exist → 404 after the token check, body
    // read and JSON parse: the shared HTTP layer's cost without validation, NATS or the 202.
    if (opts.phases.includes('floor'))
      await phase('floor', usageUrl.replace(world.meterId, 'mtr_doesnotexist'), single, 1, auth);
    // Diagnostic (opt-in): GET /healthz, the HTTP layer with no auth, no body, a constant reply.
    if (opts.phases.includes('healthz'))
      await phase('healthz', `http://127.0.0.1:${apiPort}/healthz`, '', 1, {}, 'GET');
    if (opts.phases.includes('single')) await phase('single', usageUrl, single, 1, auth);
    // Diagnostic (opt-in): the same requests to the floor server — the ceiling plus the durable publish, nothing else.
    if (opts.phases.includes('publish-floor'))
      await phase('publish-floor', floorUrl, lately(single), 1, floorHeaders, 'POST', undefined, undefined, floors);
    if (opts.phases.includes('batched')) await phase('batched', usageUrl, batch, opts.batch, auth);
    if (opts.phases.includes('publish-floor-batched'))
      await phase(
        'publish-floor-batched',
        floorUrl,
        batch,
        opts.batch,
        floorHeaders,
        'POST',
        undefined,
        undefined,
        floors,
      );
    // The usage WebSocket (bench/phases/stream.ts): frames of --batch records with meter_id, as POST /v1/usage takes them.
    const streamRecords = JSON.stringify(
      Array.from({ length: opts.batch }, (_, i) => ({ meter_id: world.meterId, value: (i % 10) + 1, timestamp: ts })),
    );
    if (opts.phases.includes('stream'))
      await phase('stream', `ws://127.0.0.1:${apiPort}/v1/usage/stream`, streamRecords, opts.batch, auth);
    // The client library's UsageEmitter against plain batched posts, same records (bench/phases/emitter.ts): opt-in.
    if (opts.phases.includes('emitter')) {
      report.emitter = await runEmitterPhase({
        world,
        ch,
        apiPort,
        cpu,
        log,
        records: arg('emitter-records', 200_000),
        batch: arg('emitter-batch', 1000),
        concurrency: arg('emitter-concurrency', 4),
      });
    }
    const lag: LagSummary = await probe.stop();
    report.lag = { ...lag, probes_refused: probe.refused };
    log(`lag: ${JSON.stringify(report.lag)}`);

    // Every record that got a 202 must be in ClickHouse, exactly once.
    const accepted = await acceptedRecords([...apis, ...floors]);
    const drainStart = Date.now();
    const stored = await distinctCount(ch, `account_id = '${world.accountId}'`, accepted, 15 * 60_000);
    const drainS = (Date.now() - drainStart) / 1000;
    const raw = await rawRowCount(ch, world.accountId);
    report.count_check = {
      accepted,
      stored,
      exact: stored === accepted,
      raw_rows: raw,
      drain_seconds_after_load: drainS,
    };
    log(
      `count check: accepted ${accepted}, stored ${stored} (${stored === accepted ? 'exact' : 'MISMATCH'}), drained ${drainS.toFixed(1)} s after the load`,
    );

    // Late data and hot meters (bench/phases/backfill.ts, issue 27): meters of their own, after the count check.
    const shapes = ['backfill', 'hot-hour', 'visible-rate'].filter((x) => opts.phases.includes(x));
    const shapeBase = { world, ch, cpu, log, acceptedRecords: () => acceptedRecords(apis), apiPort };
    if (shapes.length) report.ingest_shapes = await runIngestShapesPhases(shapeBase, shapes);
    // Retries counted once by default (bench/phases/retry-identity.ts, issue 45): its variants beside plain live.
    if (opts.phases.includes('retry-identity')) report.retry_identity = await runRetryIdentityPhase(shapeBase);
    // A hot meter's current hour read while it is ingested (bench/phases/hot-read.ts, issue 45): a meter of its own.
    if (opts.phases.includes('hot-read')) report.hot_read = await runHotReadPhase({ world, ch, apiPort, log });

    // Operator mode (bench/phases/attributed.ts): after the world's count check, whose account it doesn't write.
    if (opts.phases.includes('attributed')) {
      const usPerRecord = (name: string) =>
        Object.fromEntries(
          report.phases.filter((x) => x.phase === name && x.pipeline).map((x) => [x.tool, x.pipeline!.us_per_record]),
        );
      report.attributed = await runAttributedPhase({
        world,
        apiUrl: `http://127.0.0.1:${apiPort}`,
        customers: arg('attributed-customers', 10_000),
        batch: opts.batch,
        timestamp: ts,
        registryCustomers: arg('registry-customers', 1_000_000),
        log,
        load: (url, bodies, headers) =>
          phase('attributed', url, bodies[0]!, opts.batch, headers, 'POST', undefined, bodies),
        acceptedRecords: () => acceptedRecords(apis),
        storedRecords: (meterId, expected) => distinctCount(ch, `meter_id = '${meterId}'`, expected, 5 * 60_000),
        usPerRecord,
      });
    }

    // Entitlement checks while ingesting, and how soon a record shows in them (bench/phases/entitlement-check.ts): opt-in.
    if (opts.phases.includes('entitlement-check') && !opts.phases.includes('attributed')) {
      report.entitlement_check = await runEntitlementCheckPhase({
        world,
        apiUrl: `http://127.0.0.1:${apiPort}`,
        ceilingUrl: `http://127.0.0.1:${ceilingPort}`,
        log,
      });
    }

    // Control-plane reads (docs/design.md §11: ≥ 10k req/s), after the drain so the usage query sees every record.
    // 30 s request timeouts: the usage query scans the meter's rows, and wrk's default 2 s would count the
    // slow answers as errors instead of measuring them.
    const readHeaders = { authorization: `Bearer ${world.token}` };
    if (opts.phases.includes('get-product'))
      await phase(
        'get-product',
        `http://127.0.0.1:${apiPort}/v1/products/${world.productId}`,
        '',
        0,
        readHeaders,
        'GET',
        { timeoutSeconds: 30 },
      );
    // The control plane's hot reads from memory (issue 45, bench/phases/control-reads.ts), each beside the ceiling.
    if (opts.phases.includes('control-reads')) {
      for (const read of await prepareControlReads(world, `http://127.0.0.1:${apiPort}`))
        await phase(`control-reads ${read.name}`, read.url, '', 0, read.headers, 'GET', { timeoutSeconds: 30 });
      // How many of those reads the api answered from memory, and how many went to Postgres.
      const metrics = await (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
      log(`control-reads: ${metrics.match(/^meterline_read_cache_reads\{.*$/gm)?.join('; ')}`);
    }
    // Usage reads (issue 10): a meter with --reads-records (10 M) over 30 days, loaded straight into
    // ClickHouse (bench/phases/usage-reads.ts says how and why), read with day windows over those 30 days.
    if (opts.phases.includes('usage-query') || opts.phases.includes('get-usage')) {
      const { url, alone } = await prepareUsageReads({
        ch,
        world,
        apiPort,
        records: arg('reads-records', 10_000_000),
        log,
      });
      report.usage_query = { ...alone, ms: alone.median_ms };
      if (opts.phases.includes('get-usage')) {
        await phase('get-usage', url, '', 0, readHeaders, 'GET', {
          timeoutSeconds: 30,
          extra: async () => ({ usage_records: alone.records, usage_query_alone_ms: alone.median_ms }),
        });
      }
    }

    // The phases on worlds or meters of their own (bench/own-world-phases.ts): opt-in.
    await runOwnWorldPhases({ world, ch, apiPort, log }, report);

    const file = `${resultsDir}/${runId}.json`;
    await writeFile(file, JSON.stringify(report, null, 2) + '\n');
    printReport(report);
    log(`written ${file} (process output: ${runId}.log)`);
    if (!report.count_check.exact || report.hot_read?.ok === false) process.exitCode = 1;
  } finally {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all(
      procs.map((p) => (p.child.exitCode === null ? new Promise((r) => p.child.once('exit', r)) : undefined)),
    );
    await ch.close();
    if (!opts.keep) await world.drop().catch((err) => log(`cleanup failed: ${(err as Error).message}`));
    await own?.stop();
  }
}

main().catch((err) => {
  log((err as Error).stack ?? String(err));
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  process.exit(1);
});
