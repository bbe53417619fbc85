import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { queryValidator } from '../../../shared/http/validation.js';
import type { UsageWindow } from '../../../shared/usage/windows.js';
import { UsageQueryParams } from './schemas.js';

/** The usage query's one validation place: the query schema, then the date range rules. */
const params = queryValidator<UsageQueryParams>(UsageQueryParams);
const DAY = 86_400_000;
export const MAX_RANGE_DAYS = 366;

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dateMs = (d: string) => Date.parse(`${d}T00:00:00Z`);

export interface UsageRange {
  startDate: string;
  endDate: string;
  startMs: number;
  endMs: number;
}

/** Inclusive UTC dates → [startMs, endMs); defaults: the month of end_date (today) up to end_date. */
export function resolveRange(q: UsageQueryParams, now = Date.now()): UsageRange {
  const endDate = q.end_date ?? isoDate(now);
  const startDate = q.start_date ?? `${endDate.slice(0, 7)}-01`;
  const startMs = dateMs(startDate);
  const endMs = dateMs(endDate) + DAY;
  if (startMs >= endMs) throw new ValidationError([{ field: 'start_date', message: 'must not be after end_date' }]);
  if ((endMs - startMs) / DAY > MAX_RANGE_DAYS) throw new ValidationError([{ field: 'end_date', message: `the range must span at most ${MAX_RANGE_DAYS} days` }]);
  return { startDate, endDate, startMs, endMs };
}

export function parseUsageQuery(ctx: RequestContext): { range: UsageRange; window: UsageWindow } {
  const q = params.parseQuery(ctx.query);
  return { range: resolveRange(q), window: q.window ?? 'day' };
}
