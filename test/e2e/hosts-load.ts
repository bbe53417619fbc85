/**
 * Clients of the multi-host tests, behaving as docs/upgrades.md ("What a client does") tells one to: usage records
 * carry ids, and a request that got no answer, a 502/503/504 or a 429 is sent again — the same ids — after a short
 * pause; reads are retried the same way. They count what happened, for the test's report.
 */

export interface IngestReport {
  /** Records sent (each once, however often its batch was retried). */
  sent: number;
  /** Records whose batch got a 202 (each exactly once). */
  accepted: number;
  /** Requests that failed and were sent again (any reason below). */
  retried: number;
  /** Failed attempts by what the client saw: `503`, `502`, `network`, … */
  failures: Record<string, number>;
  /** Requests answered 202 after mark(). */
  acceptedAfterMark: number;
  /** Accepted record ids with the time their 202 arrived (ms). */
  ackedAt: Map<string, number>;
}

export interface Ingest {
  /** Stops sending new batches; resolves once every batch in flight got its 202. */
  stop(): Promise<IngestReport>;
  accepted(): number;
  acceptedAfterMark(): number;
  mark(): void;
}

const RETRYABLE = new Set([429, 502, 503, 504]);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Batches of `batch` records (value 1, ids `<prefix>-<n>`) over `connections` loops until stop(). */
export function startIngest(
  base: string,
  token: string,
  meterId: string,
  prefix: string,
  o: { connections?: number; batch?: number; pauseMs?: number } = {},
): Ingest {
  const batch = o.batch ?? 50;
  let next = 0;
  let stopping = false;
  let marked = false;
  const report: IngestReport = {
    sent: 0,
    accepted: 0,
    retried: 0,
    failures: {},
    acceptedAfterMark: 0,
    ackedAt: new Map(),
  };
  const fail = (why: string) => {
    report.retried++;
    report.failures[why] = (report.failures[why] ?? 0) + 1;
  };
  const loop = async () => {
    while (!stopping) {
      const from = next;
      next += batch;
      const ts = new Date().toISOString();
      const records = Array.from({ length: batch }, (_v, i) => ({
        id: `${prefix}-${from + i}`,
        value: 1,
        timestamp: ts,
      }));
      report.sent += batch;
      const body = JSON.stringify(records);
      for (;;) {
        let status = 0;
        let answer: { accepted?: number } = {};
        try {
          const r = await fetch(`${base}/v1/meters/${meterId}/usage`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          status = r.status;
          answer = (await r.json().catch(() => ({}))) as { accepted?: number };
        } catch {
          fail('network');
          await pause(200);
          continue;
        }
        if (status === 202 && answer.accepted === records.length) {
          const now = Date.now();
          for (const r of records) report.ackedAt.set(r.id, now);
          report.accepted += records.length;
          if (marked) report.acceptedAfterMark += records.length;
          break;
        }
        if (!RETRYABLE.has(status))
          throw new Error(`ingest: unexpected ${status} ${JSON.stringify(answer).slice(0, 300)}`);
        fail(String(status));
        await pause(200);
      }
      if (o.pauseMs) await pause(o.pauseMs);
    }
  };
  const loops = Promise.all(Array.from({ length: o.connections ?? 6 }, loop));
  return {
    stop: async () => {
      stopping = true;
      await loops;
      return report;
    },
    accepted: () => report.accepted,
    acceptedAfterMark: () => report.acceptedAfterMark,
    mark: () => (marked = true),
  };
}

export interface ReadReport {
  reads: number;
  /** Reads that needed more than one attempt. */
  retried: number;
  /** Reads not answered 200 within `giveUpMs` of retries. */
  failed: number;
  /** The most attempts one read needed. */
  maxAttempts: number;
  /** The longest time from a read's first attempt to its 200 (ms). */
  longestMs: number;
  failures: string[];
}

/** A read loop (`GET path`, retried per the docs until `giveUpMs`) until stop(). */
export function startReads(base: string, token: string, path: string, giveUpMs = 60_000) {
  const report: ReadReport = { reads: 0, retried: 0, failed: 0, maxAttempts: 0, longestMs: 0, failures: [] };
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const started = Date.now();
      let attempts = 0;
      let ok = false;
      while (!ok && Date.now() - started < giveUpMs) {
        attempts++;
        try {
          const r = await fetch(`${base}${path}`, {
            headers: { authorization: `Bearer ${token}` },
            signal: AbortSignal.timeout(30_000),
          });
          await r.arrayBuffer();
          ok = r.status === 200;
          if (!ok && !RETRYABLE.has(r.status)) report.failures.push(`unexpected ${r.status}`);
        } catch (err) {
          ok = false;
          if (report.failures.length < 20) report.failures.push((err as Error).message);
        }
        if (!ok) await pause(200);
      }
      report.reads++;
      if (attempts > 1) report.retried++;
      if (!ok) report.failed++;
      report.maxAttempts = Math.max(report.maxAttempts, attempts);
      report.longestMs = Math.max(report.longestMs, Date.now() - started);
      await pause(100);
    }
  })();
  return {
    reads: () => report.reads,
    stop: async () => {
      stopping = true;
      await loop;
      return report;
    },
  };
}
