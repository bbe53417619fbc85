import type { ExportInterval } from '../../../shared/vocabulary.js';

/** How long a scheduled window is; windows start on whole UTC hours or days (docs/exports.md "Schedules"). */
export const INTERVAL_MS: Record<ExportInterval, number> = { hourly: 3_600_000, daily: 86_400_000 };

/** A window is exported this long after it ended: the consumer's batches and the hour's settle have landed. */
export const EXPORT_SETTLE_MS = 5 * 60_000;

/** Windows added per schedule per pass: a schedule started long ago catches up over several passes. */
const MAX_WINDOWS_PER_PASS = 48;

/** The first window boundary at or after `t`. */
export function alignUp(t: Date, interval: ExportInterval): Date {
  const ms = INTERVAL_MS[interval];
  return new Date(Math.ceil(t.getTime() / ms) * ms);
}

/**
 * The whole windows from `next` (the end of the last window exported, or the schedule's aligned start) that have
 * ended by `now` less `settleMs` (late usage and a period's close get that long to land).
 */
export function dueWindows(
  next: Date,
  interval: ExportInterval,
  now: Date,
  settleMs: number,
): { from: Date; to: Date }[] {
  const ms = INTERVAL_MS[interval];
  const out: { from: Date; to: Date }[] = [];
  for (let f = next.getTime(); f + ms <= now.getTime() - settleMs && out.length < MAX_WINDOWS_PER_PASS; f += ms)
    out.push({ from: new Date(f), to: new Date(f + ms) });
  return out;
}
