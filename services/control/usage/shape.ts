import type { MeterType } from '../../../shared/meters/record.js';
import { histogramSummary, usageValue } from '../../domain/usage/aggregate.js';
import type { WindowStats } from '../../domain/usage/stats.js';
import { formatTimestamp } from '../../../shared/usage/timestamp.js';

/**
 * The `start`/`end` text of one answer's windows: every group of a group-by answer repeats the same windows,
 * so each bound is formatted once per answer rather than once per group (20 groups × 31 days: 1,240 → 32).
 */
export function windowStamps(): (ms: number) => string {
  const texts = new Map<number, string>();
  return (ms) => {
    let text = texts.get(ms);
    if (text === undefined) texts.set(ms, (text = formatTimestamp(ms)));
    return text;
  };
}

export function windowOut(
  s: WindowStats,
  type: MeterType,
  aggregation: string,
  stamp: (ms: number) => string = formatTimestamp,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    start: stamp(s.start),
    end: stamp(s.end),
    value: usageValue(s, aggregation),
    count: s.count,
  };
  return type === 'histogram' ? { ...out, ...histogramSummary(s) } : out;
}
