/** Percentiles every histogram window reports. */
export const PERCENTILES = [0.5, 0.9, 0.95, 0.99] as const;

/** Aggregates of one window; decimals as exact strings ("0.300000000"), absent when the window is empty. */
export interface WindowStats {
  start: number;
  end: number;
  count: number;
  sum: string;
  min?: string;
  max?: string;
  /** Value with the latest timestamp (ties: the greatest record id). */
  last?: string;
  /** Distinct values of the meter's unique_by dimension (unique_count meters only). */
  unique?: number;
  /** t-digest estimates for PERCENTILES (ClickHouse quantilesTDigest, Float32). */
  percentiles?: number[];
}
