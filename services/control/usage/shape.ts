import { JsonDecimal } from '../../../shared/money/json.js';
import type { MeterType } from '../../../shared/meters/record.js';
import type { WindowStats } from '../../../shared/usage/query.js';
import { aggregateValue, averageOf, percentileOf } from '../../../shared/usage/aggregate.js';
import { formatTimestamp } from '../../../shared/usage/timestamp.js';

type Out = JsonDecimal | number | null;

const dec = (s: string | null | undefined): JsonDecimal | null => (s == null ? null : new JsonDecimal(s));
const avg = (s: WindowStats) => dec(averageOf(s));
const percentile = percentileOf;

/** The meter's aggregation over a window (shared/usage/aggregate.ts), decimals written exactly. */
export function valueOf(s: WindowStats, _type: MeterType, aggregation: string): Out {
  const v = aggregateValue(s, aggregation);
  return typeof v === 'string' ? new JsonDecimal(v) : v;
}

/** Histograms show their whole distribution summary next to the chosen aggregation. */
export function histogramFields(s: WindowStats): Record<string, Out> {
  return {
    min: dec(s.min),
    max: dec(s.max),
    avg: avg(s),
    p50: percentile(s, 0.5),
    p90: percentile(s, 0.9),
    p95: percentile(s, 0.95),
    p99: percentile(s, 0.99),
  };
}

export function windowOut(s: WindowStats, type: MeterType, aggregation: string): Record<string, unknown> {
  const out: Record<string, unknown> = { start: formatTimestamp(s.start), end: formatTimestamp(s.end), value: valueOf(s, type, aggregation), count: s.count };
  return type === 'histogram' ? { ...out, ...histogramFields(s) } : out;
}
