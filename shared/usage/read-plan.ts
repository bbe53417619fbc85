/**
 * Which part of a read comes from rollups and which from raw rows (shared/usage/read-sql.ts builds the SELECT).
 * A whole hour is read from `usage_hourly` when its rollup holds every record: swept (every hour up to the sweep
 * watermark) or settled since (the current hour too, once quiet), and not marked by an insert since its last
 * recompute (shared/usage/hour-marks.ts). Everything else — partial hours at the edges (a period ending
 * mid-hour), unswept and unsettled hours, hours with late records pending — is read raw, so a read is exact
 * whatever is pending.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { hourStates, isSettled } from './hour-marks.js';
import { HOUR_MS } from './sql.js';

export interface ReadPlan {
  /** [fromHour, toHour) ranges read from rollups. */
  rollupHours: [number, number][];
  rawRanges: [number, number][];
}

/** Hours whose rollups are stale (marked since their last recompute), and hours settled whether swept or not. */
export interface PlanHours {
  pending: ReadonlySet<number>;
  settled: ReadonlySet<number>;
}

const NO_HOURS: PlanHours = { pending: new Set(), settled: new Set() };

export function readPlan(
  startMs: number,
  endMs: number,
  swept: number | undefined,
  hours: PlanHours = NO_HOURS,
): ReadPlan {
  const firstFull = Math.ceil(startMs / HOUR_MS);
  const lastFullEnd = Math.floor(endMs / HOUR_MS);
  if (firstFull >= lastFullEnd) return { rollupHours: [], rawRanges: [[startMs, endMs]] };
  const fromRollup = (h: number) =>
    !hours.pending.has(h) && ((swept !== undefined && h <= swept) || hours.settled.has(h));
  const rollupHours: [number, number][] = [];
  const rawRanges: [number, number][] = [];
  const add = (list: [number, number][], from: number, to: number) => {
    const last = list[list.length - 1];
    if (last && last[1] === from) last[1] = to;
    else list.push([from, to]);
  };
  if (startMs < firstFull * HOUR_MS) add(rawRanges, startMs, firstFull * HOUR_MS);
  // Runs of hours: a swept range with nothing pending is one comparison per hour, and one range.
  for (let h = firstFull; h < lastFullEnd; h++) {
    if (fromRollup(h)) add(rollupHours, h, h + 1);
    else add(rawRanges, h * HOUR_MS, (h + 1) * HOUR_MS);
  }
  if (lastFullEnd * HOUR_MS < endMs) add(rawRanges, lastFullEnd * HOUR_MS, endMs);
  return { rollupHours, rawRanges };
}

/** The condition on `hour` of a plan's rollup part. */
export function rollupHoursSql(plan: ReadPlan): string {
  return `(${plan.rollupHours.map(([a, b]) => (b === a + 1 ? `hour = ${a}` : `(hour >= ${a} AND hour < ${b})`)).join(' OR ')})`;
}

/**
 * The hours of a read of `meters` (a condition on account_id and meter_id) over [startMs, endMs) for readPlan:
 * its whole hours' marks and settles looked up (one small query). An hour is pending when any of its meters' marks
 * is not covered by a recompute, settled when every one is.
 */
export async function planHours(
  ch: ClickHouseClient,
  database: string,
  meters: string,
  startMs: number,
  endMs: number,
): Promise<PlanHours> {
  const firstFull = Math.ceil(startMs / HOUR_MS);
  const lastFullEnd = Math.floor(endMs / HOUR_MS);
  if (firstFull >= lastFullEnd) return NO_HOURS;
  const states = await hourStates(ch, database, `${meters} AND hour >= ${firstFull} AND hour < ${lastFullEnd}`);
  const pending = new Set<number>();
  const settled = new Set<number>();
  for (const s of states) if (!isSettled(s)) pending.add(s.hour);
  for (const s of states) if (!pending.has(s.hour)) settled.add(s.hour);
  return { pending, settled };
}
