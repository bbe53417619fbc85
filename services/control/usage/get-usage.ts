import type { RouteDef } from '../../../shared/http/route.js';
import type { HttpReply } from '../../../shared/http/context.js';
import type { Infra } from '../../../shared/infra.js';
import { reply } from '../../../shared/http/reply.js';
import { queryUsage } from '../../../shared/usage/query.js';
import { histogramSummary, usageValue } from '../../../shared/usage/aggregate.js';
import { ReadCoalescer } from '../../../shared/usage/coalesce.js';
import { windowOut } from './shape.js';
import { MeterUsageSchema, UsageQueryDoc } from './schemas.js';
import { checkReadDimensions, parseUsageQuery, type UsageRead } from './input.js';
import { meterForUsage } from './store.js';

/** The usage answer of one meter of the account (404 when it has none of that id). */
async function usageReply(infra: Infra, accountId: string, meterId: string, read: UsageRead): Promise<HttpReply> {
  const meter = await meterForUsage(infra.pg, accountId, meterId);
  checkReadDimensions(read, meter.dimensions);
  const { range, window, groupBy, filters } = read;
  const result = await queryUsage(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, {
    accountId,
    meterId,
    type: meter.type,
    startMs: range.startMs,
    endMs: range.endMs,
    window,
    groupBy,
    filters,
    uniqueBy: meter.unique_by ?? undefined,
  });
  const { type, aggregation } = meter;
  const sliced = {
    ...(filters.size ? { filters: Object.fromEntries(filters) } : {}),
    ...(result.groups
      ? {
          group_by: groupBy,
          groups: result.groups.map((g) => ({
            dimensions: Object.fromEntries(groupBy.map((k, i) => [k, g.values[i] || null])),
            value: usageValue(g.total, aggregation),
            count: g.total.count,
            ...(type === 'histogram' ? histogramSummary(g.total) : {}),
            data: g.windows.map((w) => windowOut(w, type, aggregation)),
          })),
        }
      : {}),
  };
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
    ...sliced,
  });
}

/** GET /v1/meters/{meter_id}/usage — the meter's usage by window (and by group), duplicates counted once. */
export function getUsageRoute(infra: Infra): RouteDef<UsageRead> {
  const reads = new ReadCoalescer<HttpReply>();
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage',
    auth: 'read',
    input: parseUsageQuery,
    handler: async (ctx, read) => {
      const accountId = ctx.principal!.accountId;
      const meterId = ctx.params.meter_id!;
      // Same account, meter, resolved range and slice: one computation for every such request in flight.
      const { range, window, groupBy, filters } = read;
      const key = JSON.stringify([accountId, meterId, range.startMs, range.endMs, window, groupBy, [...filters]]);
      return { ...(await reads.run(key, () => usageReply(infra, accountId, meterId, read))) };
    },
    doc: {
      summary: 'Usage of a meter by window (hour, day, month or none), optionally filtered and grouped by dimensions; every window present, duplicates counted once',
      tags: ['usage'],
      query: UsageQueryDoc,
      responses: { '200': { description: 'Usage by window (and by group with group_by)', schema: MeterUsageSchema } },
    },
  };
}
