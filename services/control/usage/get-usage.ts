import type { RouteDef } from '../../../shared/http/route.js';
import type { HttpReply } from '../../../shared/http/context.js';
import type { Infra } from '../../../shared/infra.js';
import { reply } from '../../../shared/http/reply.js';
import { queryUsage } from '../../domain/usage/query.js';
import { AccountReadGate } from '../../domain/usage/read-gate.js';
import { UnavailableError } from '../../../shared/errors.js';
import { histogramSummary, usageValue } from '../../domain/usage/aggregate.js';
import { ReadCoalescer } from '../../domain/usage/coalesce.js';
import { windowOut, windowStamps } from './shape.js';
import { MeterUsageSchema, UsageQueryDoc } from '../../../shared/api/usage.js';
import { checkReadDimensions, parseUsageQuery, resolveRange, type UsageRead } from './input.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { meterForUsage } from '../../domain/usage/store.js';
import { customerNames, customerSlice } from '../../domain/usage/customers.js';
import { ACCOUNT_GROUP } from '../../domain/usage/read-sql.js';
import { hasScope } from '../../../shared/auth/types.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/**
 * The usage answer of one meter of the account, or of the deployment (404 when there is none of that id). A
 * deployment meter is read per customer (domain/usage/customers.ts): `asOperator` reads them all.
 */
async function usageReply(
  infra: Infra,
  accountId: string,
  asOperator: boolean,
  meterId: string,
  asked: UsageRead,
): Promise<HttpReply> {
  const meter = await meterForUsage(infra.pg, accountId, meterId);
  const slice = meter.scope === 'deployment' ? await customerSlice(infra.pg, accountId, asOperator, asked) : undefined;
  const read = slice?.read ?? asked;
  checkReadDimensions(read, meter.dimensions);
  const { range, window, groupBy, filters } = read;
  const maxExecutionSeconds = infra.config.USAGE_QUERY_MAX_EXECUTION_SECONDS;
  const query = {
    accountId,
    accounts: slice?.accounts,
    meterId,
    type: meter.type,
    startMs: range.startMs,
    endMs: range.endMs,
    window,
    groupBy,
    filters,
    uniqueBy: meter.unique_by ?? undefined,
    neverCorrected: !meter.corrected,
  };
  const result = await queryUsage(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, query, {
    maxExecutionSeconds,
  }).catch((err: Error) => {
    // ClickHouse stopped the read at max_execution_time (18.16: code 159, TIMEOUT_EXCEEDED).
    if (/TIMEOUT_EXCEEDED|Timeout exceeded: elapsed/.test(err.message))
      throw new UnavailableError(
        `The usage query ran over ${maxExecutionSeconds} s and was stopped; ask for a shorter range or retry later.`,
        5,
      );
    throw err;
  });
  const { type, aggregation } = meter;
  const stamp = windowStamps();
  const byAccount = groupBy.indexOf(ACCOUNT_GROUP);
  const names =
    result.groups && byAccount >= 0
      ? await customerNames(
          infra.pg,
          result.groups.map((g) => g.values[byAccount]!),
        )
      : undefined;
  const shown = (i: number, value: string) => (i === byAccount ? (names!.get(value) ?? value) : value || null);
  const sliced = {
    ...(asked.filters.size ? { filters: Object.fromEntries(asked.filters) } : {}),
    ...(result.groups
      ? {
          group_by: asked.groupBy,
          groups: result.groups.map((g) => ({
            dimensions: Object.fromEntries(asked.groupBy.map((k, i) => [k, shown(i, g.values[i]!)])),
            value: usageValue(g.total, aggregation),
            count: g.total.count,
            ...(type === 'histogram' ? histogramSummary(g.total) : {}),
            data: g.windows.map((w) => windowOut(w, type, aggregation, stamp)),
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
    data: result.windows.map((w) => windowOut(w, type, aggregation, stamp)),
    ...sliced,
  });
}

/** GET /v1/meters/{meter_id}/usage — the meter's usage by window (and by group), duplicates counted once. */
export function getUsageRoute(infra: Infra): RouteDef<UsageRead> {
  const reads = new ReadCoalescer<HttpReply>();
  const gated = infra.metrics.counter(
    'meterline_usage_reads_gated_total',
    'Usage reads that waited for or were refused a slot of their account (USAGE_QUERIES_PER_ACCOUNT)',
    ['outcome'],
  );
  const gate = new AccountReadGate(infra.config.USAGE_QUERIES_PER_ACCOUNT, infra.config.USAGE_QUERY_QUEUE_PER_ACCOUNT, {
    queued: () => gated.inc({ outcome: 'queued' }),
    refused: () => gated.inc({ outcome: 'refused' }),
  });
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage',
    auth: 'read',
    input: parseUsageQuery,
    handler: async (ctx, read) => {
      const asOperator = hasScope(ctx.principal!, 'admin');
      const meterId = ctx.params.meter_id!;
      // A customer's own meter read by an operator: in the customer's account (its clock's month by default).
      const accountId = await accountActingOn(infra.pg, ctx.principal!, 'meter', meterId);
      // The default range (this month up to today) is the account's: its test clock's month for a clocked customer.
      if (read.dates.end_date === undefined) {
        const { now, clockId } = await accountTime(infra.pg, accountId);
        if (clockId) read = { ...read, range: resolveRange(read.dates, now.getTime()) };
      }
      // Same caller, meter, resolved range and slice: one computation for every such request in flight;
      // distinct computations of one account pass its gate (a few at once, a short queue, then 503 busy).
      const { range, window, groupBy, filters } = read;
      const key = JSON.stringify([
        accountId,
        asOperator,
        meterId,
        range.startMs,
        range.endMs,
        window,
        groupBy,
        [...filters],
      ]);
      return {
        ...(await reads.run(key, () =>
          gate.run(accountId, () => usageReply(infra, accountId, asOperator, meterId, read)),
        )),
      };
    },
    doc: {
      summary:
        'Usage of a meter by window (hour, day, month or none), optionally filtered and grouped by dimensions; every window present, duplicates counted once. A deployment meter: an admin token reads every customer (filter[customer], group_by=customer), any other token its own usage',
      tags: ['usage'],
      query: UsageQueryDoc,
      responses: { '200': { description: 'Usage by window (and by group with group_by)', schema: MeterUsageSchema } },
    },
  };
}
