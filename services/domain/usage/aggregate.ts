import { Decimal } from '../../../shared/money/decimal.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { PERCENTILES, type WindowStats } from './stats.js';

/** A reported usage value: exact decimals, integer counts, float percentiles, null for "no data". */
export type UsageValue = JsonDecimal | number | null;

const dec = (s: string | undefined): JsonDecimal | null => (s === undefined ? null : new JsonDecimal(s));

/** Mean as an exact decimal, rounded half away from zero to 9 places (the stored precision). */
function avg(s: WindowStats): JsonDecimal | null {
  return s.count === 0 ? null : new JsonDecimal(new Decimal(s.sum).div(s.count).toDecimalPlaces(9));
}

function percentile(s: WindowStats, p: number): number | null {
  const i = PERCENTILES.indexOf(p as (typeof PERCENTILES)[number]);
  return s.percentiles?.[i] ?? null;
}

/**
 * THE rule turning a window's stats into a meter's aggregation (docs/design.md §8): sums and counts are 0 when the
 * window is empty, the others null. The usage API and the billing engine both call this (billing through
 * usageQuantity), so an invoice's quantity is exactly what `GET …/usage?window=none` shows.
 */
export function usageValue(s: WindowStats, aggregation: string): UsageValue {
  switch (aggregation) {
    case 'count':
      return s.count;
    case 'sum':
      return s.count === 0 ? 0 : new JsonDecimal(s.sum);
    case 'unique_count':
      return s.unique ?? 0;
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
      throw new Error(`unknown aggregation ${aggregation}`);
  }
}

/** usageValue as an exact decimal for invoice maths; a window without data bills 0. */
export function usageQuantity(s: WindowStats, aggregation: string): Decimal {
  const v = usageValue(s, aggregation);
  if (v === null) return new Decimal(0);
  return new Decimal(v instanceof JsonDecimal ? v.text : v);
}

/** Histograms show their whole distribution summary next to the chosen aggregation. */
export function histogramSummary(s: WindowStats): Record<string, UsageValue> {
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
