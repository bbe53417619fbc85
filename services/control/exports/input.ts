import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { parseTimestamp, TIMESTAMP_FORMAT_MESSAGE } from '../../../shared/usage/timestamp.js';
import type { Config } from '../../../shared/config.js';
import {
  CreateExportBody,
  CreateExportScheduleBody,
  ListExportSchedulesQuery,
  ListExportsQuery,
  type ExportDestination as WireDestination,
} from '../../../shared/api/exports.js';
import { checkDestinationConfigured, localPathProblem } from '../../domain/exports/destinations.js';
import type { ExportDestination, NewExport, NewExportSchedule } from '../../domain/exports/types.js';

/** Exports' one validation place: the schemas, then the window, the destination's path and whether it is set up. */
const createBody = bodyValidator<CreateExportBody>(CreateExportBody);
const scheduleBody = bodyValidator<CreateExportScheduleBody>(CreateExportScheduleBody);
const listQuery = queryValidator<ListExportsQuery>(ListExportsQuery);
const scheduleQuery = queryValidator<ListExportSchedulesQuery>(ListExportSchedulesQuery);

/** The longest window one export covers. */
export const MAX_EXPORT_DAYS = 366;
const DAY_MS = 86_400_000;

export const parseListExports = (ctx: RequestContext): ListExportsQuery => listQuery.parseQuery(ctx.query);
export const parseListSchedules = (ctx: RequestContext): ListExportSchedulesQuery =>
  scheduleQuery.parseQuery(ctx.query);

function destination(d: WireDestination, errors: FieldError[]): ExportDestination {
  if (d.type === 'local') {
    const problem = localPathProblem(d.path);
    if (problem) errors.push({ field: 'destination.path', message: problem });
    return { type: 'local', path: d.path.split('/').filter(Boolean).join('/') };
  }
  const prefix = d.prefix ?? '';
  if (prefix.startsWith('/') || prefix.includes('\0') || prefix.split('/').includes('..'))
    errors.push({ field: 'destination.prefix', message: 'must not start with / or hold `..`' });
  return { type: 's3', bucket: d.bucket, prefix };
}

export function parseNewExport(config: Config) {
  return (ctx: RequestContext): NewExport => {
    const input = createBody.parse(ctx.body);
    const errors: FieldError[] = [];
    const from = parseTimestamp(input.from);
    const to = parseTimestamp(input.to);
    if (from === undefined) errors.push({ field: 'from', message: TIMESTAMP_FORMAT_MESSAGE });
    if (to === undefined) errors.push({ field: 'to', message: TIMESTAMP_FORMAT_MESSAGE });
    if (from !== undefined && to !== undefined) {
      if (to <= from) errors.push({ field: 'to', message: 'must be after from' });
      else if (to - from > MAX_EXPORT_DAYS * DAY_MS)
        errors.push({ field: 'to', message: `must be at most ${MAX_EXPORT_DAYS} days after from` });
    }
    const dest = destination(input.destination, errors);
    if (errors.length) throw new ValidationError(errors);
    checkDestinationConfigured(dest, config);
    return { kind: input.kind, format: input.format, from: new Date(from!), to: new Date(to!), destination: dest };
  };
}

export function parseNewSchedule(config: Config) {
  return (ctx: RequestContext): NewExportSchedule => {
    const input = scheduleBody.parse(ctx.body);
    const errors: FieldError[] = [];
    let startsAt = Date.now();
    if (input.starts_at !== undefined) {
      const t = parseTimestamp(input.starts_at);
      if (t === undefined) errors.push({ field: 'starts_at', message: TIMESTAMP_FORMAT_MESSAGE });
      else startsAt = t;
    }
    const dest = destination(input.destination, errors);
    if (errors.length) throw new ValidationError(errors);
    checkDestinationConfigured(dest, config);
    return {
      kind: input.kind,
      format: input.format,
      interval: input.interval,
      destination: dest,
      startsAt: new Date(startsAt),
    };
  };
}
