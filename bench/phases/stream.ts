/**
 * Load for the `stream` phase: GET /v1/usage/stream (docs/design.md §8) over `connections` WebSockets, each
 * keeping `window` frames unanswered (closed loop, like wrk's connections), every frame `{seq, records}`
 * with the same batch of records. Reports frames as requests, records/s from the answers, and the frame →
 * answer latency. Runs in the benchmark process (the load generator's CPU is counted apart).
 */
import { WebSocket } from 'ws';
import type { LoadResult } from '../load.js';

export interface StreamLoadSpec {
  /** ws://host:port/v1/usage/stream */
  url: string;
  authorization: string;
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
  let frames = 0;
  let refused = 0;
  let errors = 0;
  let accepted = 0;
  let stopping = false;
  const t0 = performance.now();
  const deadline = t0 + spec.seconds * 1000;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const ws = new WebSocket(spec.url, { headers: { authorization: spec.authorization }, perMessageDeflate: false });
      const sentAt = new Map<number, number>();
      let seq = 0;
      const sendOne = () => {
        const s = seq++;
        sentAt.set(s, performance.now());
        ws.send(`{"seq":${s},"records":${spec.recordsJson}}`);
      };
      ws.on('open', () => {
        for (let i = 0; i < spec.window; i++) sendOne();
      });
      ws.on('message', (data) => {
        const text = String(data);
        // Answers start `{"seq":N,`: read the seq and the accepted count without parsing the results.
        const seqEnd = text.indexOf(',', 7);
        const s = Number(text.slice(7, seqEnd));
        const at = sentAt.get(s);
        sentAt.delete(s);
        if (at !== undefined) latencies.push(performance.now() - at);
        frames++;
        if (text.startsWith('"accepted":', seqEnd + 1)) accepted += Number(text.slice(seqEnd + 12, text.indexOf(',', seqEnd + 12)));
        else refused++;
        if (performance.now() < deadline && !stopping) sendOne();
        else if (sentAt.size === 0) ws.close();
      });
      ws.on('error', () => errors++);
      const hardStop = setTimeout(() => ws.terminate(), spec.seconds * 1000 + 30_000);
      ws.on('close', () => {
        clearTimeout(hardStop);
        resolve();
      });
    });
  const timer = setTimeout(() => (stopping = true), spec.seconds * 1000);
  await Promise.all(Array.from({ length: spec.connections }, one));
  clearTimeout(timer);
  const duration = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    tool: 'ws',
    requests: frames,
    requests_per_s: frames / duration,
    latency_p50_ms: r(percentile(latencies, 50)),
    latency_p99_ms: r(percentile(latencies, 99)),
    latency_max_ms: r(latencies[latencies.length - 1] ?? NaN),
    non_2xx: refused,
    errors,
    duration_s: duration,
    pid: process.pid,
    records_accepted: accepted,
  };
}
