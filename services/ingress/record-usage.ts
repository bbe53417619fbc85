import { operatorReportedDetail, OPERATOR_REPORTED_METER, ValidationError } from '../../shared/errors.js';
import type { RouteDef } from '../../shared/http/route.js';
import { afterRate, isPromise } from '../../shared/http/pipeline.js';
import { meterUsableBy, operatorReported, type MeterRecord } from '../../shared/meters/record.js';
import { acceptBatch, checkBatchSize, type MeterFor, type RecordError } from './batch.js';
import { problemResponses } from './problem-docs.js';
import {
  AcceptedUsageSchema,
  BatchResultSchema,
  CloudEventSchema,
  MeterUsageRecordBody,
  UsageBatchBody,
} from '../../shared/api/usage-records.js';
import { acceptCloudEvents, CLOUDEVENT_MEDIA_TYPE, CLOUDEVENTS_BATCH_MEDIA_TYPE } from './cloudevents.js';
import { recordContext, takeRequestRecords } from './emitter.js';
import type { RecordContext } from './records.js';
import type { IngressDeps } from './deps.js';

// Stands in for the meter of an item without a usable meter_id, so its other fields are still checked.
const NO_METER: MeterRecord = {
  id: '',
  account_id: '',
  type: 'gauge',
  aggregation: 'last',
  status: 'active',
  updated_at_ms: 0,
};

const meterIdOf = (item: unknown): unknown =>
  item !== null && typeof item === 'object' ? (item as { meter_id?: unknown }).meter_id : undefined;

/**
 * The meter of each item of a batch across meters (its `meter_id`), for `checkBatch`: meters the registry
 * has not seen yet are looked up first; another account's meter is as missing as an unknown one.
 */
export function itemMeters(deps: IngressDeps, rc: RecordContext, items: unknown[]): MeterFor | Promise<MeterFor> {
  deps.registry.assertCurrent(); // 503 rather than meters the process may no longer know the state of
  let unknown: Set<string> | undefined;
  for (const item of items) {
    const ref = meterIdOf(item);
    if (typeof ref === 'string' && deps.registry.resolve(rc.accountId, ref) === undefined)
      (unknown ??= new Set()).add(ref);
  }
  // Every meter known already (the usual case): no promise.
  return unknown
    ? deps.registry.ensureRefs(rc.accountId, unknown).then(() => meterLookup(deps, rc))
    : meterLookup(deps, rc);
}

function meterLookup(deps: IngressDeps, rc: RecordContext): MeterFor {
  const accountId = rc.accountId;
  const operator = rc.attribution?.emitter.operator === true;
  return (item: unknown): MeterRecord | RecordError => {
    const id = meterIdOf(item);
    if (typeof id !== 'string') return NO_METER;
    const meter = deps.registry.resolve(accountId, id);
    if (meter === undefined || !meterUsableBy(meter, accountId))
      return { code: 'not_found', detail: `Meter ${id} does not exist.` };
    if (meter.status !== 'active') return { code: 'meter_inactive', detail: `Meter ${id} is inactive.` };
    if (!operator && operatorReported(meter))
      return { code: OPERATOR_REPORTED_METER, detail: operatorReportedDetail(id) };
    return meter;
  };
}

/** POST /v1/usage — a batch of up to 1,000 records across the caller's meters (`meter_id` per record: an id or a key). */
export function recordUsageRoute(deps: IngressDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/usage',
    auth: 'write',
    body: 'json',
    idempotent: false,
    rateLimit: 'records',
    handler: (ctx) => {
      const body = ctx.body;
      const principal = ctx.principal!;
      // Only records of a batch of an acceptable size count against the rate; before any meter lookup, so an
      // account over its rate costs nothing more (429, nothing published).
      if (ctx.mediaType === CLOUDEVENT_MEDIA_TYPE || ctx.mediaType === CLOUDEVENTS_BATCH_MEDIA_TYPE) {
        const events = Array.isArray(body) ? checkBatchSize(body) : 1;
        return afterRate(ctx, takeRequestRecords(deps, principal, events), () =>
          acceptCloudEvents(deps, ctx, recordContext(deps, principal)),
        );
      }
      if (!Array.isArray(body)) {
        throw new ValidationError([
          { field: '', message: body === undefined ? 'a JSON body is required' : 'must be an array of records' },
        ]);
      }
      return afterRate(ctx, takeRequestRecords(deps, principal, checkBatchSize(body)), () => {
        const rc = recordContext(deps, principal);
        const accept = (meterFor: MeterFor) => acceptBatch(body, meterFor, rc, deps.names, deps.publisher, true);
        const meters = itemMeters(deps, rc, body);
        return isPromise(meters) ? meters.then(accept) : accept(meters);
      });
    },
    doc: {
      summary:
        'Record usage across meters: a JSON array of up to 1,000 records, each with its meter_id; or CloudEvents 1.0 in structured mode (application/cloudevents+json, application/cloudevents-batch+json)',
      tags: ['usage'],
      requestBody: UsageBatchBody(MeterUsageRecordBody),
      otherRequestBodies: {
        [CLOUDEVENT_MEDIA_TYPE]: CloudEventSchema,
        [CLOUDEVENTS_BATCH_MEDIA_TYPE]: UsageBatchBody(CloudEventSchema),
      },
      responses: {
        '202': {
          description:
            'Batch outcome: accepted and rejected records by index (one CloudEvent: the accepted record `{id, meter_id, value, timestamp, received_at}`)',
          schema: { oneOf: [BatchResultSchema, AcceptedUsageSchema] },
        },
        ...problemResponses(['404', '409', '422', '429', '503']),
      },
    },
  };
}
