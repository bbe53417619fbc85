/**
 * Load for the `stream` phase: GET /v1/usage/stream (docs/design.md §8) through `meterline/client`'s
 * UsageStream, over `connections` sockets, each keeping `window` frames unanswered (closed loop, like wrk's
 * connections: the stream's maxInflight is the window, and `window` senders each send a frame as soon as
 * their previous one is answered), every frame the same pre-serialised batch of records. Reports frames as
 * requests, records/s from the answers, and the client's frame → answer latency. Runs in the benchmark
 * process (the load generator's CPU is counted apart).
 */
import { MeterlineError, UsageStream } from '../../shared/client/index.js';
import type { LoadResult } from '../load.js';

export interface StreamLoadSpec {
  /** http://host:port of the api. */
  baseUrl: string;
  token: string;
  /** JSON array of the records every frame carries. */
  recordsJson: string;
  connections: number;
  /** Unanswered frames per connection (≤ USAGE_STREAM_MAX_INFLIGHT). */
  window: number;
  seconds: number;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runStreamLoad(spec: StreamLoadSpec): Promise<LoadResult & { records_accepted: number }> {
  const latencies: number[] = [];
  const t0 = performance.now();
  const deadline = t0 + spec.seconds * 1000;
  const streams = Array.from(
    { length: spec.connections },
    () => new UsageStream({ baseUrl: spec.baseUrl, token: spec.token, maxInflight: spec.window }),
  );
  let errors = 0;
  const sender = async (stream: UsageStream) => {
    while (performance.now() < deadline) {
      try {
        latencies.push((await stream.send(spec.recordsJson)).latencyMs);
      } catch (err) {
        // A frame refused for now (429/503, counted by the stream as refused): keep the window full; anything
        // else (socket dropped, handshake refused for its token): this sender stops.
        if (err instanceof MeterlineError && err.retryable) continue;
        errors++;
        return;
      }
    }
  };
  await Promise.all(streams.flatMap((s) => Array.from({ length: spec.window }, () => sender(s))));
  const duration = (performance.now() - t0) / 1000;
  await Promise.all(streams.map((s) => s.close()));
  const total = streams
    .map((s) => s.counters)
    .reduce((a, c) => ({ acks: a.acks + c.acks, refused: a.refused + c.refused, accepted: a.accepted + c.accepted }), {
      acks: 0,
      refused: 0,
      accepted: 0,
    });
  latencies.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    tool: 'ws',
    requests: total.acks + total.refused,
    requests_per_s: (total.acks + total.refused) / duration,
    latency_p50_ms: r(percentile(latencies, 50)),
    latency_p99_ms: r(percentile(latencies, 99)),
    latency_max_ms: r(latencies[latencies.length - 1] ?? NaN),
    non_2xx: total.refused,
    errors,
    duration_s: duration,
    pid: process.pid,
    records_accepted: total.accepted,
  };
}
