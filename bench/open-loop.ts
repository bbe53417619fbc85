/**
 * An open-loop load: requests sent at a fixed rate whatever the answers' speed (wrk and autocannon are closed
 * loops: a slower server gets fewer requests). Runs in a worker thread of its own, so the benchmark's event loop
 * (the lag probe timing its probes) is not the one sending a thousand requests a second.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface OpenLoopSpec {
  url: string;
  headers: Record<string, string>;
  /** Sent in turn. */
  bodies: string[];
  requestsPerS: number;
  seconds: number;
  /** Requests in flight at most; a request due beyond it is not sent and counted `behind` (default 512). */
  maxInflight?: number;
  /** Replaced in every body by the time the request is sent (ISO 8601): records as fresh as a live emitter's. */
  nowMarker?: string;
  /**
   * Counts readable while the load runs (`openLoopProgress`): requests sent, accepted and refused so far, each
   * counted before anyone could see its effect (sent before the request goes out).
   */
  progress?: SharedArrayBuffer;
}

const SENT = 0;
const ACCEPTED = 1;
const REFUSED = 2;

/** A `progress` buffer for a spec, and a reader of it from any thread. */
export function openLoopProgress(): {
  buffer: SharedArrayBuffer;
  read: () => { sent: number; accepted: number; refused: number };
} {
  const buffer = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const counts = new Int32Array(buffer);
  return {
    buffer,
    read: () => ({
      sent: Atomics.load(counts, SENT),
      accepted: Atomics.load(counts, ACCEPTED),
      refused: Atomics.load(counts, REFUSED),
    }),
  };
}

export interface OpenLoopResult {
  sent: number;
  accepted: number;
  refused: number;
  /** Due but not sent: `maxInflight` answers were outstanding (the server, or this generator, fell behind). */
  behind: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function openLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const max = spec.maxInflight ?? 512;
  const out: OpenLoopResult = { sent: 0, accepted: 0, refused: 0, behind: 0 };
  let inflight = 0;
  const progress = spec.progress ? new Int32Array(spec.progress) : undefined;
  const count = (slot: number) => progress && Atomics.add(progress, slot, 1);
  const parts = spec.nowMarker ? spec.bodies.map((b) => b.split(spec.nowMarker!)) : undefined;
  let now = '';
  let nowAt = -1;
  const pending = new Set<Promise<void>>();
  const t0 = performance.now();
  for (;;) {
    const elapsed = (performance.now() - t0) / 1000;
    if (elapsed >= spec.seconds) break;
    const due = Math.floor(elapsed * spec.requestsPerS) - out.sent - out.behind;
    for (let i = 0; i < due; i++) {
      if (inflight >= max) {
        out.behind++;
        continue;
      }
      const k = out.sent++ % spec.bodies.length;
      let body = spec.bodies[k]!;
      if (parts) {
        // The clock read once per millisecond at most: a thousand requests a second share a few strings.
        const ms = Date.now();
        if (ms !== nowAt) [now, nowAt] = [new Date(ms).toISOString(), ms];
        body = parts[k]!.join(now);
      }
      inflight++;
      count(SENT);
      const p: Promise<void> = fetch(spec.url, { method: 'POST', headers: spec.headers, body })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.status === 202) out.accepted++;
          else out.refused++;
          count(res.status === 202 ? ACCEPTED : REFUSED);
        })
        .catch(() => {
          out.refused++;
          count(REFUSED);
        })
        .finally(() => {
          inflight--;
          pending.delete(p);
        });
      pending.add(p);
    }
    await sleep(5);
  }
  await Promise.all(pending);
  return out;
}

/** Runs the load in a worker thread and resolves with its counts. */
export function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: spec });
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => code !== 0 && reject(new Error(`open-loop worker exited with ${code}`)));
  });
}

if (!isMainThread && parentPort) void openLoop(workerData as OpenLoopSpec).then((r) => parentPort!.postMessage(r));
