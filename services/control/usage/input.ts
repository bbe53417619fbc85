import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { DIMENSION_LIMITS, dimensionKeyProblem } from '../../../shared/usage/dimensions.js';
import { queryValidator } from '../../../shared/http/validation.js';
import type { UsageWindow } from '../../../shared/usage/windows.js';
import { ACCOUNT_GROUP } from '../../domain/usage/read-sql.js';
import { MAX_FILTER_KEYS, MAX_FILTER_VALUES, MAX_GROUP_BY, UsageQueryParams } from '../../../shared/api/usage.js';

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
  if ((endMs - startMs) / DAY > MAX_RANGE_DAYS)
    throw new ValidationError([{ field: 'end_date', message: `the range must span at most ${MAX_RANGE_DAYS} days` }]);
  return { startDate, endDate, startMs, endMs };
}

export interface UsageRead {
  /** Resolved at real time; a customer on a test clock has its range resolved again at the clock's (`dates`). */
  range: UsageRange;
  dates: Pick<UsageQueryParams, 'start_date' | 'end_date'>;
  window: UsageWindow;
  /** Dimension keys to group by, in the order asked. */
  groupBy: string[];
  /** Dimension key → accepted values (filter[key]=value, repeatable). */
  filters: Map<string, string[]>;
}

const FILTER_PARAM = /^filter\[(.*)\]$/;

/** `filter[key]=value` pairs out of the query (the rest goes to the schema), with their rules. */
function parseFilters(query: URLSearchParams): { filters: Map<string, string[]>; rest: URLSearchParams } {
  const filters = new Map<string, string[]>();
  const rest = new URLSearchParams();
  const errors: FieldError[] = [];
  for (const [name, value] of query) {
    const m = FILTER_PARAM.exec(name);
    if (!m) {
      rest.append(name, value);
      continue;
    }
    const key = m[1]!;
    const problem = dimensionKeyProblem(key, undefined);
    if (problem) errors.push({ field: name, message: problem });
    else if (value.length === 0 || value.length > DIMENSION_LIMITS.maxValueLength)
      errors.push({ field: name, message: `must be 1 to ${DIMENSION_LIMITS.maxValueLength} characters` });
    else {
      const values = filters.get(key) ?? [];
      if (!values.includes(value)) values.push(value);
      filters.set(key, values);
      if (values.length > MAX_FILTER_VALUES)
        errors.push({ field: name, message: `at most ${MAX_FILTER_VALUES} values per key` });
    }
  }
  if (filters.size > MAX_FILTER_KEYS) errors.push({ field: 'filter', message: `at most ${MAX_FILTER_KEYS} keys` });
  if (errors.length) throw new ValidationError(errors);
  return { filters, rest };
}

export function parseUsageQuery(ctx: RequestContext): UsageRead {
  const { filters, rest } = parseFilters(ctx.query);
  const q = params.parseQuery(rest);
  const groupBy = q.group_by ? q.group_by.split(',') : [];
  const problem =
    groupBy.length > MAX_GROUP_BY
      ? `must name at most ${MAX_GROUP_BY} dimensions`
      : (groupBy.map((k) => dimensionKeyProblem(k, undefined)).find(Boolean) ??
        (new Set(groupBy).size !== groupBy.length ? 'must not name a dimension twice' : undefined));
  if (problem) throw new ValidationError([{ field: 'group_by', message: problem }]);
  const dates = { start_date: q.start_date, end_date: q.end_date };
  return { range: resolveRange(q), dates, window: q.window ?? 'day', groupBy, filters };
}

/** The meter-dependent rules of a read: a meter declaring dimensions is read by those only. */
export function checkReadDimensions(read: UsageRead, declared: readonly string[]): void {
  if (declared.length === 0) return;
  const errors: FieldError[] = [];
  for (const key of read.groupBy)
    if (key !== ACCOUNT_GROUP && !declared.includes(key))
      errors.push({ field: 'group_by', message: `${key} is not a declared dimension of this meter` });
  for (const key of read.filters.keys())
    if (!declared.includes(key))
      errors.push({ field: `filter[${key}]`, message: 'is not a declared dimension of this meter' });
  if (errors.length) throw new ValidationError(errors);
}
