import { type RateLimitedError, ValidationError, type FieldError } from '../../shared/errors.js';
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
    | 'operator_reported_meter'
    | 'rate_limited';
  detail: string;
  errors?: FieldError[];
}

export type BatchResult =
  | { index: number; status: 'accepted'; id: string }
  | { index: number; status: 'rejected'; error: RecordError };

/** Where a batch item's meter comes from: fixed by the path, or the item's `meter_id`. */
export type MeterFor = (item: unknown) => MeterRecord | RecordError;

/** What a batch of nothing valid says of a record refused for its meter (the field is its meter_id). */
const meterProblem: Partial<Record<RecordError['code'], string>> = {
  not_found: 'does not exist',
  meter_inactive: 'is inactive',
  operator_reported_meter: 'is a deployment gauge or histogram: only the operator records its usage',
};

/** A batch holds 1 to 1,000 records (422 otherwise); returns how many. */
export function checkBatchSize(items: unknown[]): number {
  if (items.length === 0) throw new ValidationError([{ field: '', message: 'must contain at least 1 record' }]);
  if (items.length > USAGE_LIMITS.maxBatchRecords) {
    throw new ValidationError([{ field: '', message: `must contain at most ${USAGE_LIMITS.maxBatchRecords} records` }]);
  }
  return items.length;
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
  /**
   * Admin emitters (records for many accounts, each under its own ingest rate: customer-rates.ts): for each
   * accepted record, in order, its index, the account it is for and where its row starts in `rows`; and where
   * every item's result ends in `resultsJson`, so that records refused for their account's rate can be taken out.
   */
  owners?: AcceptedOwners;
  /** A record refused for its account's rate (admin emitters): a batch of nothing else is a 429. */
  rateLimited?: RateLimitedError;
}

export interface AcceptedOwners {
  /** Accepted records: `account` holds one item each; the other arrays are sized for the whole batch. */
  account: string[];
  index: number[];
  /** The account's customer registry slot (-1: none looked up), the key of its rate bucket in takeEach. */
  slot: number[];
  start: number[];
  /** Per item of the batch: where its result ends in `resultsJson` (the next one starts after a comma). */
  resultEnd: number[];
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
 * checked on its own; valid ones are encoded, invalid ones reported by index. The rates of the accounts an
 * admin emitter's records are for are taken after (takeCustomerRates).
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
  const n = items.length;
  // Arrays of the batch's size (an operator's batch fills them for every record): no growth, one allocation each
  // (typed arrays cost twice that to allocate at a batch's size, growing arrays as much).
  const owners: AcceptedOwners | undefined = ctx.takeRecordsEach
    ? { account: [], index: new Array(n), slot: new Array(n), start: new Array(n), resultEnd: new Array(n) }
    : undefined;
  let accepted = 0;
  const errors: FieldError[] = []; // reused: most records have none
  for (let i = 0; i < n; i++) {
    const item = items[i];
    const meter = meterFor(item);
    let error: RecordError | undefined;
    if (!('type' in meter)) error = meter;
    else {
      const start = rows.length;
      const id = writeRecord(rows, item, meter, ctx, errors, withMeterId, owners?.account);
      if (id !== undefined) {
        if (owners) {
          owners.index[accepted] = i;
          owners.slot[accepted] = ctx.attribution ? ctx.attribution.slot : -1;
          owners.start[accepted] = start;
        }
        accepted++;
        // Server-assigned ids are [0-9A-Za-z_]: no escaping needed.
        json += `${i ? ',' : ''}{"index":${i},"status":"accepted","id":${(item as { id?: string }).id === undefined ? `"${id}"` : JSON.stringify(id)}}`;
        if (owners) owners.resultEnd[i] = json.length;
        continue;
      }
      const own = errors.splice(0);
      // Records converted from another envelope (CloudEvents) name the fields the caller sent.
      if (fieldName) for (const e of own) e.field = fieldName(e.field);
      error = { code: recordErrorCode(own), detail: new ValidationError(own).detail, errors: own };
    }
    rejected.push({ index: i, error });
    json += (i ? ',' : '') + JSON.stringify({ index: i, status: 'rejected', error } satisfies BatchResult);
    if (owners) owners.resultEnd[i] = json.length;
  }
  return { total: items.length, accepted, rows: rows.bytes(), resultsJson: json, rejected, owners };
}

/**
 * Per-account ingest rates of an admin emitter's records (operator mode, docs/operator-mode.md). The request
 * as a whole counted against the emitter's own ceiling (`attributed`) before anything else; once its records
 * are checked, each account they are for takes its count of valid records from its own ingest rate — one take
 * per account, all at once (takeEach: a take may wait for a lease, shared/limits/rate-limiter.ts). An account over its
 * rate gets its records refused (`rate_limited`), nothing of them published; the emitter's other customers go
 * through: one noisy customer is throttled, not the operator's whole emitter.
 */
export function takeCustomerRates(b: CheckedBatch, ctx: RecordContext): CheckedBatch | Promise<CheckedBatch> {
  const owners = b.owners;
  const takeEach = ctx.takeRecordsEach;
  if (!owners || !takeEach || b.accepted === 0) return b;
  const refused = takeEach(owners.account, owners.slot);
  // Most batches find every customer's tokens leased already: answered with no promise at all.
  if (!(refused instanceof Map)) return refused.then((r) => (r.size ? withoutRefused(b, r) : b));
  return refused.size ? withoutRefused(b, refused) : b;
}

/** The batch without the records of accounts over their rate: their rows out, their results `rate_limited`. */
function withoutRefused(b: CheckedBatch, refused: Map<string, RateLimitedError>): CheckedBatch {
  const owners = b.owners!;
  const results: string[] = new Array(b.total);
  for (let i = 0, from = 0; i < b.total; from = owners.resultEnd[i++]! + 1)
    results[i] = b.resultsJson.slice(from, owners.resultEnd[i]);
  const kept: Buffer[] = [];
  const rejected = [...b.rejected];
  const n = owners.account.length;
  let accepted = 0;
  let rateLimited: RateLimitedError | undefined;
  for (let k = 0; k < n; k++) {
    const err = refused.get(owners.account[k]!);
    if (!err) {
      kept.push(b.rows.subarray(owners.start[k], k + 1 < n ? owners.start[k + 1] : b.rows.length));
      accepted++;
      continue;
    }
    rateLimited = err;
    const index = owners.index[k]!;
    const error: RecordError = { code: 'rate_limited', detail: err.detail };
    rejected.push({ index, error });
    results[index] = JSON.stringify({ index, status: 'rejected', error });
  }
  rejected.sort((x, y) => x.index - y.index);
  return {
    ...b,
    accepted,
    rows: Buffer.concat(kept),
    resultsJson: results.join(','),
    rejected,
    rateLimited,
  };
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
  const b = await takeCustomerRates(checkBatch(items, meterFor, ctx, withMeterId, fieldName), ctx);
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
          message: meterProblem[r.error.code] ?? r.error.detail,
        });
    }
    throw new ValidationError(all, `None of the ${items.length} records is valid.`, recordErrorCode(all));
  }
  await publisher.submit(usageSubjectOf(names, ctx), b.rows, b.accepted);
  return reply.jsonText(202, `{${batchOutcomeJson(b)}}`);
}
