/**
 * The `emitter` phase (issue 18 §6–7): the same number of records sent three times — by plain batched posts
 * to POST /v1/usage (fetch, batches of `batch` records, `concurrency` requests in flight: the comparison, what a
 * caller writes without the library), and by `meterline/client`'s UsageEmitter with the same batch size and
 * concurrency over each of its transports (POST /v1/usage batches; frames of the usage WebSocket with
 * `concurrency` frames in flight) — each timed until every record is settled (202 / ack) and
 * ClickHouse holds it. Reported per run: records/s and CPU per record of the sender (this process: what the
 * client library costs a caller) and of the server side (api, NATS, consumer, ClickHouse). Both send record
 * ids, so the server does the same work; the count check after the phases covers these records too.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { UsageEmitter, newClientRecordId } from '../../shared/client/index.js';
import type { CpuMeter } from '../cpu.js';
import { storedRowCount, waitForRows } from '../pipeline-cost.js';
import type { BenchWorld } from '../world.js';

export interface EmitterRun {
  sender: Sender;
  records: number;
  send_s: number;
  drain_s: number;
  records_per_s: number;
  /** µs of CPU per record, by process group (load_generator = the sender). */
  us_per_record: Record<string, number>;
  requests: number;
  retries: number;
  /** Mean and max of the sender's request (frame) → answer latency, ms (the emitter's ack-latency counters). */
  ack_latency_mean_ms?: number;
  ack_latency_max_ms?: number;
}

type Sender = 'raw-posts' | 'usage-emitter' | 'usage-emitter-stream';

export interface EmitterResult {
  records: number;
  batch: number;
  concurrency: number;
  runs: EmitterRun[];
}

interface EmitterDeps {
  world: BenchWorld;
  ch: ClickHouseClient;
  apiPort: number;
  cpu: CpuMeter;
  log: (m: string) => void;
  records: number;
  batch: number;
  concurrency: number;
}

/** Plain batched posts: what a caller writes without the library. */
async function rawPosts(
  url: string,
  token: string,
  meterId: string,
  records: number,
  batch: number,
  concurrency: number,
): Promise<Sent> {
  let next = 0;
  let requests = 0;
  const worker = async () => {
    while (next < records) {
      const n = Math.min(batch, records - next);
      next += n;
      const timestamp = new Date().toISOString();
      const body = JSON.stringify(
        Array.from({ length: n }, (_, i) => ({
          meter_id: meterId,
          value: (i % 10) + 1,
          timestamp,
          id: newClientRecordId(),
        })),
      );
      requests++;
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      const answer = (await res.json()) as { rejected?: number };
      if (res.status !== 202 || answer.rejected)
        throw new Error(`raw post: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, retries: 0 };
}

type Sent = Pick<EmitterRun, 'requests' | 'retries' | 'ack_latency_mean_ms' | 'ack_latency_max_ms'>;

async function viaEmitter(
  baseUrl: string,
  token: string,
  meterId: string,
  records: number,
  batch: number,
  concurrency: number,
  transport: 'batches' | 'stream',
): Promise<Sent> {
  const emitter = new UsageEmitter({ baseUrl, token, batchSize: batch, concurrency, transport, flushOnExit: false });
  for (let i = 0; i < records; i++) await emitter.emit({ meter_id: meterId, value: (i % 10) + 1 });
  await emitter.close();
  const c = emitter.counters;
  if (c.accepted !== records) throw new Error(`emitter: ${JSON.stringify(c)}`);
  return {
    requests: c.requests,
    retries: c.retries,
    ack_latency_mean_ms: round(c.ackLatencyMsSum / c.acks),
    ack_latency_max_ms: round(c.ackLatencyMsMax),
  };
}

export async function runEmitterPhase(deps: EmitterDeps): Promise<EmitterResult> {
  const { world, ch, cpu, records, batch, concurrency } = deps;
  const baseUrl = `http://127.0.0.1:${deps.apiPort}`;
  const runs: EmitterRun[] = [];
  for (const sender of ['raw-posts', 'usage-emitter', 'usage-emitter-stream'] as const) {
    const rowsBefore = await storedRowCount(ch);
    cpu.begin();
    const t0 = performance.now();
    const sent =
      sender === 'raw-posts'
        ? await rawPosts(`${baseUrl}/v1/usage`, world.token, world.meterId, records, batch, concurrency)
        : await viaEmitter(
            baseUrl,
            world.token,
            world.meterId,
            records,
            batch,
            concurrency,
            sender === 'usage-emitter' ? 'batches' : 'stream',
          );
    const sendS = (performance.now() - t0) / 1000;
    const drainS = await waitForRows(ch, rowsBefore + records, 5 * 60_000);
    const used = cpu.usedSeconds();
    cpu.end();
    const us = Object.fromEntries(
      Object.entries(used).map(([g, s]) => [g, Math.round(((s * 1e6) / records) * 100) / 100]),
    );
    const run: EmitterRun = {
      sender,
      records,
      send_s: round(sendS),
      drain_s: round(drainS),
      records_per_s: Math.round(records / sendS),
      us_per_record: us,
      ...sent,
    };
    runs.push(run);
    deps.log(
      `emitter ${sender}: ${run.records_per_s} records/s (${run.send_s} s, drained ${run.drain_s} s after), ${run.requests} requests, ${run.retries} retries, ack latency mean ${run.ack_latency_mean_ms ?? '—'} ms max ${run.ack_latency_max_ms ?? '—'} ms, µs/record ${JSON.stringify(us)}`,
    );
  }
  return { records, batch, concurrency, runs };
}

const round = (x: number) => Math.round(x * 100) / 100;

export function emitterLines(r: EmitterResult): string[] {
  const groups = [...new Set(r.runs.flatMap((x) => Object.keys(x.us_per_record)))];
  const head = `emitter: ${r.records.toLocaleString('en-US')} records per sender, batches of ${r.batch}, ${r.concurrency} in flight; CPU µs per record by process group`;
  const rows = r.runs.map(
    (x) =>
      `  ${x.sender.padEnd(20)} ${String(x.records_per_s).padStart(8)} records/s  ${groups.map((g) => `${g} ${x.us_per_record[g] ?? '—'}`).join('  ')}`,
  );
  return ['', head, ...rows];
}
