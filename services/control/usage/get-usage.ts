import type { RouteDef } from '../../../shared/http/route.js';
import type { HttpReply } from '../../../shared/http/context.js';
import type { Infra } from '../../../shared/infra.js';
import { reply } from '../../../shared/http/reply.js';
import { queryUsage } from '../../../shared/usage/query.js';
import type { UsageWindow } from '../../../shared/usage/windows.js';
import { histogramSummary, usageValue } from '../../../shared/usage/aggregate.js';
import { ReadCoalescer } from '../../../shared/usage/coalesce.js';
import { windowOut } from './shape.js';
import { MeterUsageSchema, UsageQueryParams } from './schemas.js';
import { parseUsageQuery, type UsageRange } from './input.js';
import { meterForUsage } from './store.js';

/** The usage answer of one meter of the account (404 when it has none of that id). */
async function usageReply(infra: Infra, accountId: string, meterId: string, range: UsageRange, window: UsageWindow): Promise<HttpReply> {
  const meter = await meterForUsage(infra.pg, accountId, meterId);
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
export function getUsageRoute(infra: Infra): RouteDef<{ range: UsageRange; window: UsageWindow }> {
  const reads = new ReadCoalescer<HttpReply>();
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage',
    auth: 'read',
    input: parseUsageQuery,
    handler: async (ctx, { range, window }) => {
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
