/** Time windows of usage queries, in UTC epoch milliseconds; `end` is exclusive. */
export const USAGE_WINDOWS = ['hour', 'day', 'month', 'none'] as const;
export type UsageWindow = (typeof USAGE_WINDOWS)[number];

export interface TimeWindow {
  /** Key of the window in ClickHouse results (see windowKeySql). */
  key: number;
  start: number;
  end: number;
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** ClickHouse expression giving the window key of an epoch-ms expression (a row's ts_ms); matches windowsOf(). */
export function windowKeySql(window: UsageWindow, ts = 'ts_ms'): string {
  switch (window) {
    case 'hour':
      return `intDiv(${ts}, ${HOUR})`;
    case 'day':
      return `intDiv(${ts}, ${DAY})`;
    case 'month':
      return `toYYYYMM(toDateTime(intDiv(${ts}, 1000), 'UTC'))`;
    case 'none':
      return '0';
  }
}

/**
 * Every window of [startMs, endMs), in order, clipped to the range (a month window of a range starting on
 * the 15th starts on the 15th). Both bounds are UTC midnights in practice.
 */
export function windowsOf(window: UsageWindow, startMs: number, endMs: number): TimeWindow[] {
  const out: TimeWindow[] = [];
  if (window === 'none') return [{ key: 0, start: startMs, end: endMs }];
  if (window === 'month') {
    const d = new Date(startMs);
    let y = d.getUTCFullYear();
    let m = d.getUTCMonth();
    for (let start = startMs; start < endMs; ) {
      const next = Date.UTC(m === 11 ? y + 1 : y, (m + 1) % 12, 1);
      out.push({ key: y * 100 + m + 1, start, end: Math.min(next, endMs) });
      start = next;
      if (++m === 12) {
        m = 0;
        y++;
      }
    }
    return out;
  }
  const size = window === 'hour' ? HOUR : DAY;
  for (let k = Math.floor(startMs / size); k * size < endMs; k++) {
    out.push({ key: k, start: Math.max(k * size, startMs), end: Math.min((k + 1) * size, endMs) });
  }
  return out;
}
