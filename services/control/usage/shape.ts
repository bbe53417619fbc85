import type { MeterType } from '../../../shared/meters/record.js';
import { histogramSummary, usageValue } from '../../../shared/usage/aggregate.js';
import type { WindowStats } from '../../../shared/usage/stats.js';
import { formatTimestamp } from '../../../shared/usage/timestamp.js';

export function windowOut(s: WindowStats, type: MeterType, aggregation: string): Record<string, unknown> {
  const out: Record<string, unknown> = { start: formatTimestamp(s.start), end: formatTimestamp(s.end), value: usageValue(s, aggregation), count: s.count };
  return type === 'histogram' ? { ...out, ...histogramSummary(s) } : out;
}
