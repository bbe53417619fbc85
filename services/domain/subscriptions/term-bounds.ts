import { ValidationError } from '../../../shared/errors.js';
import type { Period } from './periods.js';

/**
 * Dates a subscription may have (issue 49): a trial of at most two years (trial_end 9999-12-31 made a period ending
 * in year +10000), and every period ending within year 9999. 422 naming the field that put it there.
 */
export const MAX_TRIAL_DAYS = 730;
const DAY_MS = 86_400_000;
/** The first instant after year 9999 (RFC 3339 has four-digit years). */
const AFTER_YEAR_9999 = Date.UTC(10000, 0, 1);

export function checkTermBounds(
  start: { trialEnd: Date | null; usage: Period; advance: Period | null },
  now: Date,
): void {
  if (start.trialEnd && start.trialEnd.getTime() - now.getTime() > MAX_TRIAL_DAYS * DAY_MS)
    throw new ValidationError([
      {
        field: 'trial_end',
        message: `must be at most ${MAX_TRIAL_DAYS} days after now (${new Date(now.getTime() + MAX_TRIAL_DAYS * DAY_MS).toISOString()})`,
      },
    ]);
  const ends = [start.usage.end, start.advance?.end].filter((d): d is Date => d !== undefined);
  if (ends.some((d) => !(d.getTime() < AFTER_YEAR_9999)))
    throw new ValidationError([
      { field: start.trialEnd ? 'trial_end' : 'interval_count', message: 'puts a billing period past year 9999' },
    ]);
}
