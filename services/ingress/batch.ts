import { ValidationError, type FieldError } from '../../shared/errors.js';
import type { HttpReply } from '../../shared/http/context.js';
import { USAGE_LIMITS } from '../../shared/usage/limits.js';
import type { MeterRecord } from '../../shared/meters/record.js';
import { checkRecord, type RecordContext } from './records.js';
import type { UsagePublisher } from './publisher.js';

export interface RecordError {
  code: 'validation_failed' | 'not_found' | 'meter_inactive';
  detail: string;
  errors?: FieldError[];
}

export type BatchResult = { index: number; status: 'accepted'; id: string } | { index: number; status: 'rejected'; error: RecordError };

/** Where a batch item's meter comes from: fixed by the path, or the item's `meter_id`. */
export type MeterFor = (item: unknown) => MeterRecord | RecordError;

export function checkBatchSize(items: unknown[]): void {
  if (items.length === 0) throw new ValidationError([{ field: '', message: 'must contain at least 1 record' }]);
  if (items.length > USAGE_LIMITS.maxBatchRecords) {
    throw new ValidationError([{ field: '', message: `must contain at most ${USAGE_LIMITS.maxBatchRecords} records` }]);
  }
}

/**
 * A batch: valid records are accepted (all in one JetStream message, so together), invalid ones reported
 * by index. Nothing valid → 422 listing every problem as `[index].field`.
 */
export async function acceptBatch(items: unknown[], meterFor: MeterFor, ctx: RecordContext, subject: string, publisher: UsagePublisher, withMeterId: boolean): Promise<HttpReply> {
  checkBatchSize(items);
  const results: BatchResult[] = new Array(items.length);
  let rows = '';
  let accepted = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const meter = meterFor(item);
    if (!('type' in meter)) {
      results[i] = { index: i, status: 'rejected', error: meter };
      continue;
    }
    const errors: FieldError[] = [];
    const rec = checkRecord(item, meter, ctx, errors, withMeterId);
    if (rec === undefined) {
      results[i] = { index: i, status: 'rejected', error: { code: 'validation_failed', detail: new ValidationError(errors).detail, errors } };
      continue;
    }
    rows += rec.row;
    accepted++;
    results[i] = { index: i, status: 'accepted', id: rec.id };
  }
  if (accepted === 0) {
    const all: FieldError[] = [];
    for (const r of results) {
      if (r.status !== 'rejected') continue;
      if (r.error.errors) for (const e of r.error.errors) all.push({ field: e.field ? `[${r.index}].${e.field}` : `[${r.index}]`, message: e.message });
      else all.push({ field: `[${r.index}].meter_id`, message: r.error.code === 'not_found' ? 'does not exist' : 'is inactive' });
    }
    throw new ValidationError(all, `None of the ${items.length} records is valid.`);
  }
  await publisher.submit(subject, rows, accepted);
  return { status: 202, body: { accepted, rejected: items.length - accepted, results } };
}
