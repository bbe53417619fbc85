/**
 * docs/design.md §9: a failed attempt is retried 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h and 24 h after the
 * previous attempt; after the ninth attempt fails the delivery is `failed`. Tests inject a schedule and a
 * clock (DeliveryOptions) instead of waiting.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const RETRY_DELAYS_MS: readonly number[] = [
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  24 * HOUR,
];

/** When attempt `attempt` (from 1) failed at `at`: when the next one is due, or null when none is left. */
export function nextAttemptAt(attempt: number, at: Date, delays: readonly number[] = RETRY_DELAYS_MS): Date | null {
  const delay = delays[attempt - 1];
  return delay === undefined ? null : new Date(at.getTime() + delay);
}
