/**
 * Noisy neighbour: one account floods ingest at 10× its records-per-second limit while another posts at a
 * normal rate; the second one's latency (p50/p99) is measured alone and during the flood. The flood's
 * 429s must cost the api little enough that the quiet account's p99 doesn't move.
 */
import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import { openLimitsBucket, writeOverrides } from '../../shared/limits/account-limits.js';
import { addBenchAccount, type BenchWorld } from '../world.js';

export interface NoisyNeighbourResult {
  noisy_limit_records_per_s: number;
  noisy_offered_records_per_s: number;
  quiet_requests_per_s: number;
  seconds: number;
  quiet_alone: { requests: number; p50_ms: number; p99_ms: number; non_202: number };
  quiet_during_flood: { requests: number; p50_ms: number; p99_ms: number; non_202: number };
  flood: { requests: number; accepted_202: number; limited_429: number; other: number };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100 : NaN;
};

/** Fires `perSecond` requests a second for `seconds` (open loop), resolving with each request's status and latency. */
async function openLoop(perSecond: number, seconds: number, send: () => Promise<number>): Promise<{ status: number; ms: number }[]> {
  const out: Promise<{ status: number; ms: number }>[] = [];
  const start = performance.now();
  const total = Math.round(perSecond * seconds);
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    out.push(send().then((status) => ({ status, ms: performance.now() - t0 }), () => ({ status: 0, ms: performance.now() - t0 })));
  }
  return Promise.all(out);
}

export async function runNoisyNeighbourPhase(o: { world: BenchWorld; apiPort: number; log: (m: string) => void; seconds: number; limit: number; quietPerSecond: number }): Promise<NoisyNeighbourResult> {
  const { world, apiPort, log, seconds, limit, quietPerSecond } = o;
  const quiet = await addBenchAccount(world, 'quiet');
  const nc = await connectNats(world.config.NATS_URL, 'bench-limits');
  try {
    await writeOverrides(await openLimitsBucket(nc, new NatsNames(world.config.NATS_NAMESPACE).limitsBucket), world.accountId, { ingest_records_per_second: limit });
  } finally {
    await nc.close();
  }
  await new Promise((r) => setTimeout(r, 500)); // the api processes' KV watch delivers the override
  const ts = new Date(Date.now() - 60_000).toISOString();
  const post = (token: string, meterId: string, body: string) => async () => {
    const res = await fetch(`http://127.0.0.1:${apiPort}/v1/meters/${meterId}/usage`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    await res.arrayBuffer();
    return res.status;
  };
  const quietSend = post(quiet.token, quiet.meterId, JSON.stringify({ value: 1, timestamp: ts }));
  const batchSize = 50;
  const floodPerSecond = (limit * 10) / batchSize;
  const floodSend = post(world.token, world.meterId, JSON.stringify(Array.from({ length: batchSize }, () => ({ value: 1, timestamp: ts }))));

  const summarize = (xs: { status: number; ms: number }[]) => ({ requests: xs.length, p50_ms: pct(xs.map((x) => x.ms), 50), p99_ms: pct(xs.map((x) => x.ms), 99), non_202: xs.filter((x) => x.status !== 202).length });
  log(`noisy-neighbour: quiet account alone, ${quietPerSecond} req/s for ${seconds} s`);
  const alone = summarize(await openLoop(quietPerSecond, seconds, quietSend));
  log(`noisy-neighbour: flood at ${limit * 10} records/s (10× its limit of ${limit}) + quiet account`);
  const [during, flood] = await Promise.all([openLoop(quietPerSecond, seconds, quietSend), openLoop(floodPerSecond, seconds, floodSend)]);
  const result: NoisyNeighbourResult = {
    noisy_limit_records_per_s: limit,
    noisy_offered_records_per_s: limit * 10,
    quiet_requests_per_s: quietPerSecond,
    seconds,
    quiet_alone: alone,
    quiet_during_flood: summarize(during),
    flood: { requests: flood.length, accepted_202: flood.filter((x) => x.status === 202).length, limited_429: flood.filter((x) => x.status === 429).length, other: flood.filter((x) => x.status !== 202 && x.status !== 429).length },
  };
  log(`noisy-neighbour: ${JSON.stringify(result)}`);
  return result;
}
