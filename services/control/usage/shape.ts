import { Decimal } from '../../../shared/money/decimal.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import type { MeterType } from '../../../shared/meters/record.js';
import { PERCENTILES, type WindowStats } from '../../../shared/usage/query.js';
import { formatTimestamp } from '../../../shared/usage/timestamp.js';

type Out = JsonDecimal | number | null;

const dec = (s: string | undefined): JsonDecimal | null => (s === undefined ? null : new JsonDecimal(s));

/** Mean as an exact decimal, rounded half away from zero to 9 places (the stored precision). */
function avg(s: WindowStats): JsonDecimal | null {
  return s.count === 0 ? null : new JsonDecimal(new Decimal(s.sum).div(s.count).toDecimalPlaces(9));
}

function percentile(s: WindowStats, p: number): number | null {
  const i = PERCENTILES.indexOf(p as (typeof PERCENTILES)[number]);
  return s.percentiles?.[i] ?? null;
}

/** The meter's aggregation over a window: sums and counts are 0 when empty, the others null. */
export function valueOf(s: WindowStats, type: MeterType, aggregation: string): Out {
  switch (aggregation) {
    case 'count':
      return s.count;
    case 'sum':
      return s.count === 0 ? 0 : new JsonDecimal(s.sum);
    case 'last':
      return dec(s.last);
    case 'min':
      return dec(s.min);
    case 'max':
      return dec(s.max);
    case 'avg':
      return avg(s);
    case 'p50':
      return percentile(s, 0.5);
    case 'p90':
      return percentile(s, 0.9);
    case 'p95':
      return percentile(s, 0.95);
    case 'p99':
      return percentile(s, 0.99);
    default:
      throw new Error(`unknown aggregation ${aggregation} of a ${type} meter`);
  }
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
