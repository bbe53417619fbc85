/**
 * CloudEvents 1.0 structured mode on POST /v1/usage (issue 18): `application/cloudevents+json` (one event) and
 * `application/cloudevents-batch+json` (a JSON array of events). Each event becomes a native record and goes
 * through the same record rules (checkRecord), the same publish and the same answers:
 * - `type` names the meter: its id, or its name when exactly one of the account's meters has that name;
 * - `source` + `id` form the record id (`ce_` + base64url SHA-256 of both), so a resent event — same source,
 *   id and time — is counted once, like a native record re-sent with its id;
 * - `time` (required here: a resend must carry the same timestamp) is the record's timestamp;
 * - `data.value` the value; every other field of `data` a dimension (string values only);
 * - `subject` (OpenMeter's convention) the customer of a deployment meter's record: its external id (operator mode).
 * Errors name the event's own fields (`data.value`, `time`, `data.model`; `[i].…` in a batch).
 */
import { createHash } from 'node:crypto';
import {
  ConflictError,
  NotFoundError,
  OPERATOR_REPORTED_METER,
  OperatorReportedMeterError,
  operatorReportedDetail,
  ValidationError,
  type FieldError,
} from '../../shared/errors.js';
import type { HttpReply, RequestContext } from '../../shared/http/context.js';
import { isMeterId, meterUsableBy, operatorReported, type MeterRecord } from '../../shared/meters/record.js';
import { acceptBatch, usageSubjectOf, type RecordError } from './batch.js';
import { acceptedRecordReply } from './record-meter-usage.js';
import { checkRecord, recordErrorCode, type RecordContext } from './records.js';
import { afterCustomerRate } from './emitter.js';
import type { IngressDeps } from './deps.js';

export const CLOUDEVENT_MEDIA_TYPE = 'application/cloudevents+json';
export const CLOUDEVENTS_BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

/** The record id of an event: deterministic in (source, id), ≤ 128 characters whatever their length. */
export function cloudEventRecordId(source: string, id: string): string {
  return 'ce_' + createHash('sha256').update(source).update('\u0000').update(id).digest('base64url');
}

/** A native record field → the event field it came from. */
export function cloudEventField(field: string): string {
  if (field === 'value') return 'data.value';
  if (field === 'timestamp') return 'time';
  if (field === 'meter_id') return 'type';
  if (field === 'dimensions') return 'data';
  if (field === 'customer') return 'subject';
  if (field.startsWith('dimensions.')) return `data.${field.slice('dimensions.'.length)}`;
  return field;
}

const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The native record `{meter_id, value, timestamp, id, dimensions}` of an event, or its envelope problems. */
function toRecord(
  event: unknown,
  meterOf: (type: string) => MeterRecord | RecordError,
): { record: object; meter: MeterRecord | RecordError } | { error: RecordError } {
  const errors: FieldError[] = [];
  if (event === null || typeof event !== 'object' || Array.isArray(event))
    return { error: invalid([{ field: '', message: 'must be a CloudEvent (a JSON object)' }]) };
  const e = event as Record<string, unknown>;
  if (e.specversion !== '1.0') errors.push({ field: 'specversion', message: 'must be "1.0"' });
  for (const k of ['id', 'source', 'type', 'time'] as const)
    if (!nonEmptyString(e[k])) errors.push({ field: k, message: 'is required (a non-empty string)' });
  if (e.datacontenttype !== undefined && e.datacontenttype !== 'application/json')
    errors.push({ field: 'datacontenttype', message: 'must be application/json' });
  if (e.subject !== undefined && (!nonEmptyString(e.subject) || e.subject.length > 128))
    errors.push({ field: 'subject', message: 'must be a customer’s external id (1–128 characters)' });
  const data = e.data;
  const dimensions: Record<string, unknown> = {};
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    errors.push({ field: 'data', message: 'must be an object with a numeric value' });
  else {
    for (const [k, v] of Object.entries(data)) {
      if (k === 'value') continue;
      if (typeof v === 'string') dimensions[k] = v;
      else
        errors.push({ field: `data.${k}`, message: 'must be string (fields of data other than value are dimensions)' });
    }
  }
  if (errors.length) return { error: invalid(errors) };
  const meter = meterOf(e.type as string);
  const record = {
    meter_id: 'type' in meter ? meter.id : (e.type as string).slice(0, 64),
    value: (data as { value?: unknown }).value,
    timestamp: e.time,
    id: cloudEventRecordId(e.source as string, e.id as string),
    ...(Object.keys(dimensions).length ? { dimensions } : {}),
    ...(e.subject !== undefined ? { customer: e.subject } : {}),
  };
  return { record, meter };
}

function invalid(errors: FieldError[]): RecordError {
  return { code: 'validation_failed', detail: new ValidationError(errors).detail, errors };
}

/**
 * Resolves `type` (an id, a key, or a name unique in the account) to a usable meter; ids and keys the registry
 * has not seen yet are looked up in KV first.
 */
async function meterResolver(
  deps: IngressDeps,
  rc: RecordContext,
  events: unknown[],
): Promise<(type: string) => MeterRecord | RecordError> {
  const accountId = rc.accountId;
  const operator = rc.attribution?.emitter.operator === true;
  const unknown = new Set<string>();
  for (const ev of events) {
    const type = ev !== null && typeof ev === 'object' ? (ev as { type?: unknown }).type : undefined;
    if (typeof type !== 'string' || deps.registry.resolve(accountId, type) !== undefined) continue;
    if (isMeterId(type) || deps.registry.byName(accountId, type) === undefined) unknown.add(type);
  }
  if (unknown.size) await deps.registry.ensureRefs(accountId, unknown);
  return (type) => {
    const direct = deps.registry.resolve(accountId, type);
    const meter = direct && meterUsableBy(direct, accountId) ? direct : deps.registry.byName(accountId, type);
    if (meter === 'ambiguous')
      return invalid([{ field: 'type', message: 'names several meters of this account; use the meter id' }]);
    if (meter === undefined) return { code: 'not_found', detail: `Meter ${type} does not exist.` };
    if (meter.status !== 'active') return { code: 'meter_inactive', detail: `Meter ${type} is inactive.` };
    if (!operator && operatorReported(meter))
      return { code: OPERATOR_REPORTED_METER, detail: operatorReportedDetail(type) };
    return meter;
  };
}

/** POST /v1/usage with a CloudEvents media type; `rc` counted the request against its rate already. */
export async function acceptCloudEvents(deps: IngressDeps, ctx: RequestContext, rc: RecordContext): Promise<HttpReply> {
  const body = ctx.body;
  if (ctx.mediaType === CLOUDEVENTS_BATCH_MEDIA_TYPE) {
    if (!Array.isArray(body))
      throw new ValidationError([{ field: '', message: 'must be a JSON array of CloudEvents' }]);
    const meterOf = await meterResolver(deps, rc, body);
    const outcome = new Map<object, MeterRecord | RecordError>();
    const records = body.map((event) => {
      const r = toRecord(event, meterOf);
      const record = 'error' in r ? {} : r.record;
      outcome.set(record, 'error' in r ? r.error : r.meter);
      return record;
    });
    return acceptBatch(
      records,
      (item) => outcome.get(item as object)!,
      rc,
      deps.names,
      deps.publisher,
      true,
      cloudEventField,
    );
  }
  const meterOf = await meterResolver(deps, rc, [body]);
  const r = toRecord(body, meterOf);
  if ('error' in r) throw new ValidationError(r.error.errors!);
  const meter = r.meter;
  if ('code' in meter) {
    if (meter.code === 'not_found') throw new NotFoundError(meter.detail);
    if (meter.code === 'meter_inactive') throw new ConflictError(meter.detail, 'meter_inactive');
    if (meter.code === OPERATOR_REPORTED_METER)
      throw new OperatorReportedMeterError(String((body as { type?: unknown }).type));
    throw new ValidationError(meter.errors!);
  }
  const errors: FieldError[] = [];
  const rec = checkRecord(r.record, meter, rc, errors, true);
  if (rec === undefined) {
    for (const e of errors) e.field = cloudEventField(e.field);
    throw new ValidationError(errors, undefined, recordErrorCode(errors));
  }
  return afterCustomerRate(rc, rec.account, () =>
    deps.publisher.submit(usageSubjectOf(deps.names, rc), rec.row, 1, () =>
      acceptedRecordReply(rec, meter.id, (body as { time: string }).time, rc.now),
    ),
  );
}
