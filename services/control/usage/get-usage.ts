import type { RouteDef } from '../../../shared/http/route.js';
import type { HttpReply } from '../../../shared/http/context.js';
import type { Infra } from '../../../shared/infra.js';
import { reply } from '../../../shared/http/reply.js';
import { queryUsage } from '../../../shared/usage/query.js';
import { AccountReadGate } from '../../../shared/usage/read-gate.js';
import { UnavailableError } from '../../../shared/errors.js';
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
  const maxExecutionSeconds = infra.config.USAGE_QUERY_MAX_EXECUTION_SECONDS;
  const result = await queryUsage(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, { accountId, meterId, type: meter.type, startMs: range.startMs, endMs: range.endMs, window }, { maxExecutionSeconds }).catch(
    (err: Error) => {
      // ClickHouse stopped the read at max_execution_time (18.16: code 159, TIMEOUT_EXCEEDED).
      if (/TIMEOUT_EXCEEDED|Timeout exceeded: elapsed/.test(err.message)) throw new UnavailableError(`The usage query ran over ${maxExecutionSeconds} s and was stopped; ask for a shorter range or retry later.`, 5);
      throw err;
    },
  );
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
  const gated = infra.metrics.counter('meterline_usage_reads_gated_total', 'Usage reads that waited for or were refused a slot of their account (USAGE_QUERIES_PER_ACCOUNT)', ['outcome']);
  const gate = new AccountReadGate(infra.config.USAGE_QUERIES_PER_ACCOUNT, infra.config.USAGE_QUERY_QUEUE_PER_ACCOUNT, {
    queued: () => gated.inc({ outcome: 'queued' }),
    refused: () => gated.inc({ outcome: 'refused' }),
  });
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage',
    auth: 'read',
    input: parseUsageQuery,
    handler: async (ctx, { range, window }) => {
      const accountId = ctx.principal!.accountId;
      const meterId = ctx.params.meter_id!;
      // Same account, meter and resolved range: one computation for every such request in flight; distinct
      // computations of one account pass its gate (a few at once, a short queue, then 429).
      const key = [accountId, meterId, range.startMs, range.endMs, window].join('\u0000');
      return { ...(await reads.run(key, () => gate.run(accountId, () => usageReply(infra, accountId, meterId, range, window)))) };
    },
    doc: {
      summary: 'Usage of a meter by window (hour, day, month or none); every window present, duplicates counted once',
      tags: ['usage'],
      query: UsageQueryParams,
      responses: { '200': { description: 'Usage by window', schema: MeterUsageSchema } },
    },
  };
}
