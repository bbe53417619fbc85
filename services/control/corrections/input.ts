import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import type { MeterRecord } from '../../../shared/meters/record.js';
import { parseTimestamp } from '../../../shared/usage/timestamp.js';
import { checkBatch } from '../../ingress/batch.js';
import { TIMESTAMP_FORMAT_MESSAGE } from '../../ingress/records.js';
import { MAX_RANGE_DAYS } from '../usage/input.js';
import { CreateCorrectionBody, ListCorrectionsQuery } from '../../../shared/api/corrections.js';
import type { NewCorrection } from '../../domain/corrections/types.js';

/** Corrections' one validation place: the body schema, exactly one of cancel/replace, the range, then the records. */
const createBody = bodyValidator<CreateCorrectionBody>(CreateCorrectionBody);
const listQuery = queryValidator<ListCorrectionsQuery>(ListCorrectionsQuery);
const DAY_MS = 86_400_000;

export const parseListCorrections = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

/** A replace before its records met the meter's rules (they need the meter: checkReplacement). */
export type CorrectionRequest = (
  | { kind: 'cancel'; ids: string[] }
  | { kind: 'replace'; startMs: number; endMs: number; records: unknown[] }
) & {
  /** The customer named (a deployment meter's correction): which field, and its value. */
  customer?: { field: 'customer' | 'customer_id'; value: string };
};

export function parseCreateCorrection(ctx: RequestContext): CorrectionRequest {
  const body = createBody.parse(ctx.body);
  if ((body.cancel === undefined) === (body.replace === undefined)) {
    throw new ValidationError([
      { field: body.cancel ? 'replace' : 'cancel', message: 'give exactly one of cancel or replace' },
    ]);
  }
  if (body.customer !== undefined && body.customer_id !== undefined)
    throw new ValidationError([{ field: 'customer', message: 'give either customer or customer_id, not both' }]);
  const customer =
    body.customer !== undefined
      ? { customer: { field: 'customer' as const, value: body.customer } }
      : body.customer_id !== undefined
        ? { customer: { field: 'customer_id' as const, value: body.customer_id } }
        : {};
  if (body.cancel) return { kind: 'cancel', ids: [...new Set(body.cancel)], ...customer };
  const r = body.replace!;
  const errors: FieldError[] = [];
  const startMs = parseTimestamp(r.start);
  const endMs = parseTimestamp(r.end);
  if (startMs === undefined) errors.push({ field: 'replace.start', message: TIMESTAMP_FORMAT_MESSAGE });
  if (endMs === undefined) errors.push({ field: 'replace.end', message: TIMESTAMP_FORMAT_MESSAGE });
  if (startMs !== undefined && endMs !== undefined) {
    if (startMs >= endMs) errors.push({ field: 'replace.end', message: 'must be after start' });
    else if (endMs - startMs > MAX_RANGE_DAYS * DAY_MS)
      errors.push({ field: 'replace.end', message: `must be at most ${MAX_RANGE_DAYS} days after start` });
  }
  if (errors.length) throw new ValidationError(errors);
  return { kind: 'replace', startMs: startMs!, endMs: endMs!, records: r.records, ...customer };
}

/**
 * A request against its meter: a replace's records pass the ingest record rules (checkBatch, the batch
 * route's own), with timestamps inside the replaced range; any rejected record refuses the whole correction.
 */
export function checkCorrection(
  req: CorrectionRequest,
  meter: MeterRecord,
  accountId: string,
  now = Date.now(),
): NewCorrection {
  if (req.kind === 'cancel') return { kind: 'cancel', ids: req.ids };
  const { startMs, endMs, records } = req;
  if (records.length === 0) return { kind: 'replace', startMs, endMs, ids: [], rows: '' };
  const window = { fromMs: startMs, toMs: endMs, message: 'must be within the replaced range [start, end)' };
  const b = checkBatch(records, () => meter, { accountId, now, window }, false);
  if (b.rejected.length) {
    const errors: FieldError[] = [];
    for (const r of b.rejected)
      for (const e of r.error.errors ?? [])
        errors.push({ field: `replace.records[${r.index}]${e.field ? `.${e.field}` : ''}`, message: e.message });
    throw new ValidationError(
      errors,
      `${b.rejected.length} of the ${records.length} replacement records are not valid.`,
    );
  }
  const ids = (JSON.parse(`[${b.resultsJson}]`) as { id: string }[]).map((r) => r.id);
  return { kind: 'replace', startMs, endMs, ids, rows: b.rows.toString('utf8') };
}

/** Replacement ids already taken (by a record stored in the range, or a cancelled one): each a field error. */
export function refuseTakenIds(ids: readonly string[], taken: ReadonlySet<string>): void {
  const errors: FieldError[] = [];
  ids.forEach((id, i) => {
    if (taken.has(id))
      errors.push({
        field: `replace.records[${i}].id`,
        message:
          'is the id of a record stored in the range or of a cancelled record; give replacement records new ids (repeating a replace already applied? it stands: GET …/usage/corrections lists it)',
      });
  });
  if (errors.length) throw new ValidationError(errors);
}
