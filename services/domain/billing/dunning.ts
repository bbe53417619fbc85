/**
 * Dunning schedule (docs/design.md §8 Invoice): the first payment attempt runs when the invoice is due (created +
 * the customer's net_terms_days; at creation with no terms); after a failed automatic attempt the next one runs at
 * the first of due + 1, 3 and 5 days that is still ahead; when none is left the invoice becomes `uncollectible`. Taking "the first point still ahead" (rather
 * than counting attempts) keeps the schedule when a manual attempt happened in between or a run was late.
 */
const DAY_MS = 86_400_000;
export const RETRY_DAYS = [1, 3, 5] as const;

export function firstPaymentAttemptAt(dueAt: Date): Date {
  return dueAt;
}

/** After an automatic attempt at `at` failed: the next attempt, or null → uncollectible. */
export function nextPaymentAttemptAt(dueAt: Date, at: Date): Date | null {
  for (const days of RETRY_DAYS) {
    const next = dueAt.getTime() + days * DAY_MS;
    if (next > at.getTime()) return new Date(next);
  }
  return null;
}
