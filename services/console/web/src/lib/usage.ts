import type { UsageReport } from './types.js';

export type UsageWindowKind = 'hour' | 'day';

export interface UsageRange {
  start_date: string;
  end_date: string;
  window: UsageWindowKind;
}

const DAY_MS = 86_400_000;
/** The API's limit on a usage query (docs/design.md §8). */
export const MAX_RANGE_DAYS = 366;
/** Hour windows over a long range would draw thousands of bars: keep hour charts to a week. */
export const MAX_HOUR_RANGE_DAYS = 7;

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The default view: hour windows over today and yesterday, UTC. */
export function defaultRange(now = Date.now()): UsageRange {
  return { start_date: utcDate(now - DAY_MS), end_date: utcDate(now), window: 'hour' };
}

/** Why a range cannot be charted, or null (checked before asking the API, which would answer 422). */
export function rangeProblem(r: UsageRange): string | null {
  const valid = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`));
  if (!valid(r.start_date) || !valid(r.end_date)) return 'Pick a start and an end date.';
  const days = (Date.parse(`${r.end_date}T00:00:00Z`) - Date.parse(`${r.start_date}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) return 'The start date is after the end date.';
  if (days > MAX_RANGE_DAYS) return `A range covers at most ${MAX_RANGE_DAYS} days.`;
  if (r.window === 'hour' && days > MAX_HOUR_RANGE_DAYS)
    return `Hour windows cover at most ${MAX_HOUR_RANGE_DAYS} days; use day windows for longer ranges.`;
  return null;
}

/** A window's label on the chart's x axis: "11-23 14:00" for hours, "2026-11-23" for days (UTC). */
export function windowLabel(startIso: string, window: UsageWindowKind): string {
  return window === 'hour' ? `${startIso.slice(5, 10)} ${startIso.slice(11, 16)}` : startIso.slice(0, 10);
}

/** The chart's series: one point per window; an empty window of a gauge (value null) is a gap. */
export function chartSeries(report: UsageReport): { labels: string[]; values: (number | null)[] } {
  const window = report.window === 'hour' ? 'hour' : 'day';
  return { labels: report.data.map((w) => windowLabel(w.start, window)), values: report.data.map((w) => w.value) };
}
