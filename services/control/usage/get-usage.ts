import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { RouteDef } from '../../../shared/http/route.js';
import type { HttpReply } from '../../../shared/http/context.js';
import { queryValidator } from '../../../shared/http/validation.js';
import type { Infra } from '../../../shared/infra.js';
import { reply } from '../../../shared/http/reply.js';
import type { MeterType } from '../../../shared/meters/record.js';
import { queryUsage } from '../../../shared/usage/query.js';
import type { UsageWindow } from '../../../shared/usage/windows.js';
import { histogramSummary, usageValue } from '../../../shared/usage/aggregate.js';
import { ReadCoalescer } from '../../../shared/usage/coalesce.js';
import { windowOut } from './shape.js';
import { MeterUsageSchema, UsageQueryParams } from './schemas.js';

const params = queryValidator<UsageQueryParams>(UsageQueryParams);
const DAY = 86_400_000;
export const MAX_RANGE_DAYS = 366;

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dateMs = (d: string) => Date.parse(`${d}T00:00:00Z`);

/** Inclusive UTC dates → [startMs, endMs); defaults: the month of end_date (today) up to end_date. */
export function resolveRange(q: UsageQueryParams, now = Date.now()): { startDate: string; endDate: string; startMs: number; endMs: number } {
  const endDate = q.end_date ?? isoDate(now);
  const startDate = q.start_date ?? `${endDate.slice(0, 7)}-01`;
  const startMs = dateMs(startDate);
  const endMs = dateMs(endDate) + DAY;
  if (startMs >= endMs) throw new ValidationError([{ field: 'start_date', message: 'must not be after end_date' }]);
  if ((endMs - startMs) / DAY > MAX_RANGE_DAYS) throw new ValidationError([{ field: 'end_date', message: `the range must span at most ${MAX_RANGE_DAYS} days` }]);
  return { startDate, endDate, startMs, endMs };
}

/** The usage answer of one meter of the account (404 when it has none of that id). */
async function usageReply(infra: Infra, accountId: string, meterId: string, range: ReturnType<typeof resolveRange>, window: UsageWindow): Promise<HttpReply> {
  const { rows } = await infra.pg.query<{ type: MeterType; aggregation: string; unit: string }>(
    'SELECT type, aggregation, unit FROM meters WHERE id = $1 AND account_id = $2',
    [meterId, accountId],
  );
  const meter = rows[0];
  if (!meter) throw new NotFoundError(`Meter ${meterId} does not exist.`);
  const result = await queryUsage(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, {
    accountId,
    meterId,
    type: meter.type,
    startMs: range.startMs,
    endMs: range.endMs,
    window,
  });
  const { type, aggregation } = meter;
  return reply.ok({
    meter_id: meterId,
    type,
    aggregation,
    unit: meter.unit,
    start_date: range.startDate,
    end_date: range.endDate,
    window,
    value: usageValue(result.total, aggregation),
    count: result.total.count,
    ...(type === 'histogram' ? histogramSummary(result.total) : {}),
    data: result.windows.map((w) => windowOut(w, type, aggregation)),
  });
}

/** GET /v1/meters/{meter_id}/usage — the meter's usage by window, duplicates counted once. */
export function getUsageRoute(infra: Infra): RouteDef {
  const reads = new ReadCoalescer<HttpReply>();
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage',
    auth: 'read',
    handler: async (ctx) => {
      const q = params.parseQuery(ctx.query);
      const range = resolveRange(q);
      const window: UsageWindow = q.window ?? 'day';
      const accountId = ctx.principal!.accountId;
      const meterId = ctx.params.meter_id!;
      // Same account, meter and resolved range: one computation for every such request in flight.
      const key = [accountId, meterId, range.startMs, range.endMs, window].join('\u0000');
      return { ...(await reads.run(key, () => usageReply(infra, accountId, meterId, range, window))) };
    },
    doc: {
      summary: 'Usage of a meter by window (hour, day, month or none); every window present, duplicates counted once',
      tags: ['usage'],
      query: UsageQueryParams,
      responses: { '200': { description: 'Usage by window', schema: MeterUsageSchema } },
    },
  };
}
