/**
 * Noisy neighbour: one account floods ingest at 10× its records-per-second limit while another posts at a
 * normal rate; the second one's latency (p50/p99) is measured alone and during the flood. The flood's
 * 429s must cost the api little enough that the quiet account's p99 doesn't move.
 */
import { spawn } from 'node:child_process';
import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import { repoPath } from '../../shared/paths.js';
import { openLimitsBucket, writeOverrides } from '../../shared/limits/account-limits.js';
import { addBenchAccount, type BenchWorld } from '../world.js';
import { MeterlineClient, MeterlineError } from '../../shared/client/index.js';

export interface NoisyNeighbourResult {
  noisy_limit_records_per_s: number;
  noisy_offered_records_per_s: number;
  quiet_requests_per_s: number;
  seconds: number;
  quiet_alone: { requests: number; p50_ms: number; p99_ms: number; non_202: number };
  quiet_during_flood: { requests: number; p50_ms: number; p99_ms: number; non_202: number };
  /** `process`: autocannon in its own OS process; `in-process`: the typed client from the bench's own event loop. */
  flood_generator: 'process' | 'in-process';
  flood: { requests: number; accepted_202: number; limited_429: number; other: number };
}

/**
 * The flood from its own OS process (autocannon's CLI at a fixed overall rate): an in-process generator
 * shares the measuring event loop, so its own backlog of thousands of pending fetches shows up as the
 * quiet account's latency (measured: p99 336 ms → 16.7 s) although the server answered the quiet requests
 * in milliseconds.
 */
function floodFromProcess(
  url: string,
  token: string,
  body: string,
  perSecond: number,
  seconds: number,
): Promise<NoisyNeighbourResult['flood']> {
  return new Promise((resolve, reject) => {
    const args = [
      repoPath('node_modules/autocannon/autocannon.js'),
      '--json',
      '-c',
      '32',
      '-R',
      String(Math.round(perSecond)),
      '-d',
      String(seconds),
      '-m',
      'POST',
      '-H',
      `authorization=Bearer ${token}`,
      '-H',
      'content-type=application/json',
      '-b',
      body,
      url,
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        const r = JSON.parse(out) as {
          requests: { total: number };
          statusCodeStats: Record<string, { count: number }>;
          non2xx: number;
        };
        const by = (code: string) => r.statusCodeStats[code]?.count ?? 0;
        const total = Object.values(r.statusCodeStats).reduce((a, x) => a + x.count, 0);
        resolve({
          requests: total,
          accepted_202: by('202'),
          limited_429: by('429'),
          other: total - by('202') - by('429'),
        });
      } catch (err) {
        reject(new Error(`autocannon output unreadable: ${(err as Error).message}: ${out.slice(0, 300)}`));
      }
    });
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100 : NaN;
};

/** Fires `perSecond` requests a second for `seconds` (open loop), resolving with each request's status and latency. */
async function openLoop(
  perSecond: number,
  seconds: number,
  send: () => Promise<number>,
): Promise<{ status: number; ms: number }[]> {
  const out: Promise<{ status: number; ms: number }>[] = [];
  const start = performance.now();
  const total = Math.round(perSecond * seconds);
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    out.push(
      send().then(
        (status) => ({ status, ms: performance.now() - t0 }),
        () => ({ status: 0, ms: performance.now() - t0 }),
      ),
    );
  }
  return Promise.all(out);
}

export async function runNoisyNeighbourPhase(o: {
  world: BenchWorld;
  apiPort: number;
  log: (m: string) => void;
  seconds: number;
  limit: number;
  quietPerSecond: number;
  floodGenerator?: 'process' | 'in-process';
}): Promise<NoisyNeighbourResult> {
  const { world, apiPort, log, seconds, limit, quietPerSecond } = o;
  const floodGenerator = o.floodGenerator ?? 'process';
  const quiet = await addBenchAccount(world, 'quiet');
  const nc = await connectNats(world.config.NATS_URL, 'bench-limits');
  try {
    await writeOverrides(
      await openLimitsBucket(nc, new NatsNames(world.config.NATS_NAMESPACE).limitsBucket),
      world.accountId,
      { ingest_records_per_second: limit },
    );
  } finally {
    await nc.close();
  }
  await new Promise((r) => setTimeout(r, 500)); // the api processes' KV watch delivers the override
  const ts = new Date(Date.now() - 60_000).toISOString();
  // Through the typed client: the status of each answer (202, or the MeterlineError's: 429 for the flood).
  const statusOf = (send: () => Promise<unknown>) => () =>
    send().then(
      () => 202,
      (err: unknown) => (err instanceof MeterlineError ? err.status : Promise.reject(err)),
    );
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const quietClient = new MeterlineClient({ baseUrl, token: quiet.token });
  const quietSend = statusOf(() => quietClient.recordMeterUsage(quiet.meterId, { value: 1, timestamp: ts }));
  const batchSize = 50;
  const floodPerSecond = (limit * 10) / batchSize;
  const floodRecords = Array.from({ length: batchSize }, () => ({ value: 1, timestamp: ts }));
  const floodClient = new MeterlineClient({ baseUrl, token: world.token });
  const floodSend = statusOf(() => floodClient.recordMeterUsageBatch(world.meterId, floodRecords));

  const summarize = (xs: { status: number; ms: number }[]) => ({
    requests: xs.length,
    p50_ms: pct(
      xs.map((x) => x.ms),
      50,
    ),
    p99_ms: pct(
      xs.map((x) => x.ms),
      99,
    ),
    non_202: xs.filter((x) => x.status !== 202).length,
  });
  log(`noisy-neighbour: quiet account alone, ${quietPerSecond} req/s for ${seconds} s`);
  const alone = summarize(await openLoop(quietPerSecond, seconds, quietSend));
  log(
    `noisy-neighbour: flood at ${limit * 10} records/s (10× its limit of ${limit}, generated ${floodGenerator}) + quiet account`,
  );
  const floodRun =
    floodGenerator === 'process'
      ? floodFromProcess(
          `${baseUrl}/v1/meters/${world.meterId}/usage`,
          world.token,
          JSON.stringify(floodRecords),
          floodPerSecond,
          seconds,
        )
      : openLoop(floodPerSecond, seconds, floodSend).then((xs) => ({
          requests: xs.length,
          accepted_202: xs.filter((x) => x.status === 202).length,
          limited_429: xs.filter((x) => x.status === 429).length,
          other: xs.filter((x) => x.status !== 202 && x.status !== 429).length,
        }));
  const [during, flood] = await Promise.all([openLoop(quietPerSecond, seconds, quietSend), floodRun]);
  const result: NoisyNeighbourResult = {
    noisy_limit_records_per_s: limit,
    noisy_offered_records_per_s: limit * 10,
    quiet_requests_per_s: quietPerSecond,
    seconds,
    quiet_alone: alone,
    quiet_during_flood: summarize(during),
    flood_generator: floodGenerator,
    flood,
  };
  log(`noisy-neighbour: ${JSON.stringify(result)}`);
  return result;
}
