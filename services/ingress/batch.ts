import { RateLimitedError, ValidationError, type FieldError } from '../../shared/errors.js';
import type { NatsNames } from '../../shared/clients/nats.js';
import type { HttpReply } from '../../shared/http/context.js';
import { reply } from '../../shared/http/reply.js';
import { USAGE_LIMITS } from '../../shared/usage/limits.js';
import type { MeterRecord } from '../../shared/meters/record.js';
import { recordErrorCode, writeRecord, type RecordContext } from './records.js';
import { RowWriter } from '../../shared/usage/wire.js';
import type { UsagePublisher } from './publisher.js';

export interface RecordError {
  code:
    | 'validation_failed'
    | 'value_out_of_range'
    | 'not_found'
    | 'meter_inactive'
    | 'unknown_customer'
    | 'rate_limited';
  detail: string;
  errors?: FieldError[];
}

export type BatchResult =
  | { index: number; status: 'accepted'; id: string }
  | { index: number; status: 'rejected'; error: RecordError };

/** Where a batch item's meter comes from: fixed by the path, or the item's `meter_id`. */
export type MeterFor = (item: unknown) => MeterRecord | RecordError;

export function checkBatchSize(items: unknown[]): void {
  if (items.length === 0) throw new ValidationError([{ field: '', message: 'must contain at least 1 record' }]);
  if (items.length > USAGE_LIMITS.maxBatchRecords) {
    throw new ValidationError([{ field: '', message: `must contain at most ${USAGE_LIMITS.maxBatchRecords} records` }]);
  }
}

/** A batch after the record rules: what to publish and the per-record outcomes (the 202 body's parts). */
export interface CheckedBatch {
  total: number;
  accepted: number;
  /** Encoded rows of the accepted records (one JetStream message's worth). */
  rows: Buffer;
  /** The `results` array's items, as JSON text, in index order. */
  resultsJson: string;
  rejected: { index: number; error: RecordError }[];
  /** A record refused for its account's rate (admin emitters): a batch of nothing else is a 429. */
  rateLimited?: RateLimitedError;
}

/**
 * The subject of a request's rows: `usage.<account>` when they are all the emitter's, the attributed subject
 * when an operator's token recorded usage for its customers (shared/clients/nats.ts).
 */
export function usageSubjectOf(names: NatsNames, ctx: RecordContext): string {
  return ctx.attribution?.forOthers ? names.attributedUsageSubject(ctx.accountId) : names.usageSubject(ctx.accountId);
}

/**
 * The batch rules, shared by every ingress that takes batches (POST bodies, stream frames): each record is
 * checked on its own; valid ones are encoded, invalid ones reported by index.
 */
export function checkBatch(
  items: unknown[],
  meterFor: MeterFor,
  ctx: RecordContext,
  withMeterId: boolean,
  fieldName?: (field: string) => string,
): CheckedBatch {
  checkBatchSize(items);
  const rejected: { index: number; error: RecordError }[] = [];
  // The 202 body, written as we go: JSON.stringify of a thousand result objects costs more than the
  // validation of their records (measured ~5× a string build).
  let json = '';
  const rows = new RowWriter(items.length);
  let accepted = 0;
  let rateLimited: RateLimitedError | undefined;
  const errors: FieldError[] = []; // reused: most records have none
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const meter = meterFor(item);
    let error: RecordError | undefined;
    if (!('type' in meter)) error = meter;
    else {
      let id: string | undefined;
      try {
        id = writeRecord(rows, item, meter, ctx, errors, withMeterId);
      } catch (err) {
        // Its customer is over its rate: this record only (one noisy customer doesn't stop the others).
        if (!(err instanceof RateLimitedError)) throw err;
        rateLimited = err;
        rejected.push({ index: i, error: { code: 'rate_limited', detail: err.detail } });
        json += (i ? ',' : '') + JSON.stringify({ index: i, status: 'rejected', error: rejected.at(-1)!.error });
        continue;
      }
      if (id !== undefined) {
        accepted++;
        // Server-assigned ids are [0-9A-Za-z_]: no escaping needed.
        json += `${i ? ',' : ''}{"index":${i},"status":"accepted","id":${(item as { id?: string }).id === undefined ? `"${id}"` : JSON.stringify(id)}}`;
        continue;
      }
      const own = errors.splice(0);
      // Records converted from another envelope (CloudEvents) name the fields the caller sent.
      if (fieldName) for (const e of own) e.field = fieldName(e.field);
      error = { code: recordErrorCode(own), detail: new ValidationError(own).detail, errors: own };
    }
    rejected.push({ index: i, error });
    json += (i ? ',' : '') + JSON.stringify({ index: i, status: 'rejected', error } satisfies BatchResult);
  }
  return { total: items.length, accepted, rows: rows.bytes(), resultsJson: json, rejected, rateLimited };
}

/** `{accepted, rejected, results}` of a checked batch, as JSON object members (the caller adds its own). */
export function batchOutcomeJson(b: CheckedBatch): string {
  return `"accepted":${b.accepted},"rejected":${b.total - b.accepted},"results":[${b.resultsJson}]`;
}

/**
 * A batch: valid records are accepted (all in one JetStream message, so together), invalid ones reported
 * by index. Nothing valid → 422 listing every problem as `[index].field`.
 */
export async function acceptBatch(
  items: unknown[],
  meterFor: MeterFor,
  ctx: RecordContext,
  names: NatsNames,
  publisher: UsagePublisher,
  withMeterId: boolean,
  fieldName?: (field: string) => string,
): Promise<HttpReply> {
  const b = checkBatch(items, meterFor, ctx, withMeterId, fieldName);
  if (b.accepted === 0 && b.rateLimited && b.rejected.every((r) => r.error.code === 'rate_limited'))
    throw b.rateLimited;
  if (b.accepted === 0) {
    const all: FieldError[] = [];
    for (const r of b.rejected) {
      if (r.error.errors)
        for (const e of r.error.errors)
          all.push({ field: e.field ? `[${r.index}].${e.field}` : `[${r.index}]`, message: e.message });
      else if (r.error.code === 'rate_limited') all.push({ field: `[${r.index}]`, message: r.error.detail });
      else
        all.push({
          field: `[${r.index}].${fieldName?.('meter_id') ?? 'meter_id'}`,
          message: r.error.code === 'not_found' ? 'does not exist' : 'is inactive',
        });
    }
    throw new ValidationError(all, `None of the ${items.length} records is valid.`, recordErrorCode(all));
  }
  await publisher.submit(usageSubjectOf(names, ctx), b.rows, b.accepted);
  return reply.jsonText(202, `{${batchOutcomeJson(b)}}`);
}
