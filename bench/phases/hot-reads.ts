/** The `hot-hour` phase's reads (bench/phases/backfill.ts): a meter's current hour read alone, timed. */
import type { UsageQuery } from '../../shared/client/index.js';
import { readClient } from './usage-reads.js';

const HOUR = 3_600_000;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** One usage read at a time: a warm-up, then `repeats` timed; a failed one (503 past the api's limit) counts at its time. */
export interface HotReads {
  records: number | null;
  repeats: number;
  failed: number;
  median_ms: number;
  p99_ms: number;
  max_ms: number;
}

export async function timeHotReads(
  api: { apiUrl: string; token: string },
  meterId: string,
  query: UsageQuery,
  repeats = 10,
): Promise<HotReads> {
  const client = readClient(api.apiUrl, api.token);
  let records: number | null = null;
  let failed = 0;
  const times: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const t0 = performance.now();
    try {
      records = (await client.getUsage(meterId, query)).count;
    } catch {
      if (i > 0) failed++;
    }
    if (i > 0) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => round(times[Math.min(times.length - 1, Math.floor(times.length * q))]!, 1);
  return { records, repeats, failed, median_ms: at(0.5), p99_ms: at(0.99), max_ms: round(times[times.length - 1]!, 1) };
}

/** Whether the current hour has more than `ms` left. */
export const hourHasRoom = (ms: number) => HOUR - (Date.now() % HOUR) > ms;

/** Waits, if the current hour ends within `ms`, until the next one has begun: the hot hour must still be open when read. */
export async function hourWithRoom(ms: number, log: (m: string) => void): Promise<void> {
  if (hourHasRoom(ms)) return;
  const left = HOUR - (Date.now() % HOUR);
  log(`hot-hour: the hour ends in ${Math.round(left / 1000)} s; waiting for the next one`);
  await new Promise((r) => setTimeout(r, left + 2000));
}
