import { Decimal } from '../money/decimal.js';
import { PERCENTILES, type WindowStats } from './query.js';

/**
 * A meter's aggregation over one window of usage — the one rule behind `value` in GET …/usage (every
 * window and `window=none`), the quantity of an invoice's metered line and the upcoming invoice.
 *
 * Exact decimals come back as strings ("0.3"), counts and t-digest percentiles (ClickHouse estimates) as
 * numbers. An empty window is 0 for sum and count and null for the others (there is no last or max of
 * nothing).
 */
export type AggregateValue = string | number | null;

export function aggregateValue(s: WindowStats, aggregation: string): AggregateValue {
  switch (aggregation) {
    case 'count':
      return s.count;
    case 'sum':
      return s.count === 0 ? 0 : s.sum;
    case 'last':
      return s.last ?? null;
    case 'min':
      return s.min ?? null;
    case 'max':
      return s.max ?? null;
    case 'avg':
      return averageOf(s);
    case 'p50':
    case 'p90':
    case 'p95':
    case 'p99':
      return percentileOf(s, Number(aggregation.slice(1)) / 100);
    default:
      throw new Error(`unknown aggregation ${aggregation}`);
  }
}

/** Mean as an exact decimal, rounded half away from zero to 9 places (the stored precision). */
export function averageOf(s: WindowStats): string | null {
  return s.count === 0 ? null : new Decimal(s.sum).div(s.count).toDecimalPlaces(9).toFixed();
}

export function percentileOf(s: WindowStats, p: number): number | null {
  const i = PERCENTILES.indexOf(p as (typeof PERCENTILES)[number]);
  return s.percentiles?.[i] ?? null;
}
