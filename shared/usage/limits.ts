/** Rules every usage record obeys (docs/design.md §8); the ingress enforces them, the docs quote them. */
export const USAGE_LIMITS = {
  /** Longest caller-supplied record id (the idempotency key). */
  maxRecordIdLength: 128,
  /** Records in one batch request. */
  maxBatchRecords: 1000,
  /** Oldest accepted timestamp, relative to now. */
  maxPastMs: 35 * 24 * 3600 * 1000,
  /** Furthest accepted timestamp ahead of now (client clock skew). */
  maxFutureMs: 5 * 60 * 1000,
  /** Values are stored as Decimal(38, 9). */
  maxDecimals: 9,
  /**
   * Largest absolute value of one record. Keeps sums of ~10^11 records inside Decimal(38, 9) (29 integer
   * digits) and every accepted integer printable without an exponent.
   */
  maxAbsValue: 1e18,
} as const;

/** Groups one usage answer may hold: past it the read is refused (TooManyGroupsError), never truncated. */
export const MAX_GROUPS = 1_000;
