import {
  ConflictError,
  NotFoundError,
  OperatorReportedMeterError,
  ValidationError,
  type FieldError,
} from '../../shared/errors.js';
import type { RouteDef } from '../../shared/http/route.js';
import { meterUsableBy, operatorReported, type MeterRecord } from '../../shared/meters/record.js';
import { canonicalTimestamp, formatTimestamp } from '../../shared/usage/timestamp.js';
import { reply } from '../../shared/http/reply.js';
import { problemResponses } from './problem-docs.js';
import { acceptBatch, checkBatchSize, usageSubjectOf } from './batch.js';
import { afterRate } from '../../shared/http/pipeline.js';
import { checkRecord, recordErrorCode, type CheckedRecord, type RecordContext } from './records.js';
import { afterCustomerRate, recordContext, takeRequestRecords } from './emitter.js';
import type { HttpReply, RequestContext } from '../../shared/http/context.js';
import {
  AcceptedUsageSchema,
  BatchResultSchema,
  UsageBatchBody,
  UsageRecordBody,
} from '../../shared/api/usage-records.js';
import type { IngressDeps } from './deps.js';

/**
 * The meter of the path, if the caller's account owns it (or it is the deployment's), it takes usage, and the
 * caller may record it (a deployment gauge or histogram: only an operator, 403 `operator_reported_meter`).
 */
export function usableMeter(deps: IngressDeps, meterId: string, rc: RecordContext): MeterRecord {
  const accountId = rc.accountId;
  const meter = deps.registry.resolve(accountId, meterId);
  // Another account's meter is indistinguishable from a missing one.
  if (meter === undefined || !meterUsableBy(meter, accountId))
    throw new NotFoundError(`Meter ${meterId} does not exist.`);
  if (meter.status !== 'active')
    throw new ConflictError(`Meter ${meterId} is inactive; reactivate it to record usage.`, 'meter_inactive');
  if (operatorReported(meter) && !rc.attribution?.emitter.operator) throw new OperatorReportedMeterError(meterId);
  return meter;
}

/** The 202 of one accepted record `{id, meter_id, value, timestamp, received_at}` (every single-record ingest). */
export function acceptedRecordReply(
  rec: CheckedRecord,
  meterId: string,
  timestampSent: string,
  now: number,
): HttpReply {
  // Written by hand (the hot path's reply): every part is a known-safe JSON token except a caller's id.
  const id = rec.assigned ? `"${rec.id}"` : JSON.stringify(rec.id);
  const timestamp = canonicalTimestamp(timestampSent, rec.tsMs);
  return reply.jsonText(
    202,
    `{"id":${id},"meter_id":"${meterId}","value":${String(rec.value)},"timestamp":"${timestamp}","received_at":"${formatTimestamp(now)}"}`,
  );
}

/** The body of one request to a meter, its meter now known to the registry (or known to be missing). */
function recordMeterUsage(
  deps: IngressDeps,
  ctx: RequestContext,
  rc: RecordContext,
  meterId: string,
): HttpReply | Promise<HttpReply> {
  const meter = usableMeter(deps, meterId, rc);
  const body = ctx.body;
  if (Array.isArray(body)) return acceptBatch(body, () => meter, rc, deps.names, deps.publisher, false);
  if (body === undefined)
    throw new ValidationError([{ field: '', message: 'a JSON body is required' }], 'A JSON request body is required.');
  const errors: FieldError[] = [];
  const rec = checkRecord(body, meter, rc, errors);
  if (rec === undefined) throw new ValidationError(errors, undefined, recordErrorCode(errors));
  return afterCustomerRate(rc, rec.account, () =>
    deps.publisher.submit(usageSubjectOf(deps.names, rc), rec.row, 1, () =>
      acceptedRecordReply(rec, meter.id, (body as { timestamp: string }).timestamp, rc.now),
    ),
  );
}

/** POST /v1/meters/{meter_id}/usage — one record, or a JSON array of up to 1,000; the path names the meter by id or key. */
export function recordMeterUsageRoute(deps: IngressDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/meters/:meter_id/usage',
    auth: 'write',
    body: 'json',
    idempotent: false, // records carry their own idempotency key (`id`)
    rateLimit: 'records',
    // Not async: a meter the registry holds is checked and the record handed to the publisher in the
    // request's own tick, and the one promise is the JetStream ack's (docs/design.md §11).
    handler: (ctx) => {
      const meterId = ctx.params.meter_id!;
      const principal = ctx.principal!;
      // Only records of a batch of an acceptable size count against the rate (an oversized array is a 422
      // that costs the caller nothing); counted before any meter lookup: a caller over its rate costs
      // nothing more (429, nothing published).
      const records = Array.isArray(ctx.body) ? checkBatchSize(ctx.body) : 1;
      return afterRate(ctx, takeRequestRecords(deps, principal, records), () => {
        const rc = recordContext(deps, principal);
        deps.registry.assertCurrent();
        if (deps.registry.resolve(rc.accountId, meterId) === undefined)
          return deps.registry.ensureRefs(rc.accountId, [meterId]).then(() => recordMeterUsage(deps, ctx, rc, meterId));
        return recordMeterUsage(deps, ctx, rc, meterId);
      });
    },
    doc: {
      summary: 'Record usage of a meter: one record, or a JSON array of up to 1,000 (202 after JetStream stored them)',
      tags: ['usage'],
      requestBody: { oneOf: [UsageRecordBody, UsageBatchBody(UsageRecordBody)] },
      responses: {
        '202': {
          description: 'Accepted: one record `{id, meter_id, value, timestamp, received_at}`, or a batch outcome',
          schema: { oneOf: [AcceptedUsageSchema, BatchResultSchema] },
        },
        ...problemResponses(['404', '409', '422', '429', '503']),
      },
    },
  };
}
