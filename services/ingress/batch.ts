import { ValidationError, type FieldError } from '../../shared/errors.js';
import type { HttpReply } from '../../shared/http/context.js';
import { reply } from '../../shared/http/reply.js';
import { USAGE_LIMITS } from '../../shared/usage/limits.js';
import type { MeterRecord } from '../../shared/meters/record.js';
import { checkRecord, recordErrorCode, type RecordContext } from './records.js';
import type { UsagePublisher } from './publisher.js';

export interface RecordError {
  code: 'validation_failed' | 'value_out_of_range' | 'not_found' | 'meter_inactive';
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
  const rejected: { index: number; error: RecordError }[] = [];
  // The 202 body, written as we go: JSON.stringify of a thousand result objects costs more than the
  // validation of their records (measured ~5× a string build).
  let json = '';
  let rows = '';
  let accepted = 0;
  const errors: FieldError[] = []; // reused: most records have none
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const meter = meterFor(item);
    let error: RecordError | undefined;
    if (!('type' in meter)) error = meter;
    else {
      const rec = checkRecord(item, meter, ctx, errors, withMeterId);
      if (rec !== undefined) {
        rows += rec.row;
        accepted++;
        // Server-assigned ids are [0-9A-Za-z_]: no escaping needed.
        json += `${i ? ',' : ''}{"index":${i},"status":"accepted","id":${rec.assigned ? `"${rec.id}"` : JSON.stringify(rec.id)}}`;
        continue;
      }
      const own = errors.splice(0);
      error = { code: recordErrorCode(own), detail: new ValidationError(own).detail, errors: own };
    }
    rejected.push({ index: i, error });
    json += (i ? ',' : '') + JSON.stringify({ index: i, status: 'rejected', error } satisfies BatchResult);
  }
  if (accepted === 0) {
    const all: FieldError[] = [];
    for (const r of rejected) {
      if (r.error.errors) for (const e of r.error.errors) all.push({ field: e.field ? `[${r.index}].${e.field}` : `[${r.index}]`, message: e.message });
      else all.push({ field: `[${r.index}].meter_id`, message: r.error.code === 'not_found' ? 'does not exist' : 'is inactive' });
    }
    throw new ValidationError(all, `None of the ${items.length} records is valid.`, recordErrorCode(all));
  }
  await publisher.submit(subject, rows, accepted);
  return reply.jsonText(202, `{"accepted":${accepted},"rejected":${items.length - accepted},"results":[${json}]}`);
}
