import type { FieldError, RateLimitedError } from '../../shared/errors.js';
import type { RateTake } from '../../shared/limits/protection.js';
import { bodyValidator, toFieldErrors } from '../../shared/http/validation.js';
import { refusesNegativeValues, type MeterRecord } from '../../shared/meters/record.js';
import { USAGE_LIMITS } from '../../shared/usage/limits.js';
import {
  decimalText,
  valueProblem,
  INTEGER_PRECISION_MESSAGE,
  PRECISION_MESSAGE,
  RANGE_MESSAGE,
  VALUE_OUT_OF_RANGE,
} from '../../shared/usage/value.js';
import { parseTimestamp, TIMESTAMP_FORMAT_MESSAGE } from '../../shared/usage/timestamp.js';
import { newUsageId } from '../../shared/usage/ids.js';
import { checkDimensions, NO_DIMENSIONS, type Dimensions } from '../../shared/usage/dimensions.js';
import { RowWriter, tsvEscape } from '../../shared/usage/wire.js';
import {
  ACCOUNT_METER_MESSAGE,
  CUSTOMER_ID_KEY,
  CUSTOMER_KEY,
  UNKNOWN_CUSTOMER,
  UNKNOWN_CUSTOMER_MESSAGES,
  type Attribution,
} from '../../shared/customers/attribution.js';
import {
  MAX_CUSTOMER_ID_LENGTH,
  MAX_METER_ID_LENGTH,
  MeterUsageRecordBody,
  UsageRecordBody,
} from '../../shared/api/usage-records.js';

// Compiled once at start; every request reuses them.
const checkRecordShape = bodyValidator(UsageRecordBody).check;
const checkMeterRecordShape = bodyValidator(MeterUsageRecordBody).check;

export { TIMESTAMP_FORMAT_MESSAGE };
export const TIMESTAMP_WINDOW_MESSAGE = 'must be within the last 35 days and at most 5 minutes ahead';
export const DECIMALS_MESSAGE = 'must have at most 9 decimal places';

const INEXACT_VALUE_MESSAGES: ReadonlySet<string> = new Set([
  RANGE_MESSAGE,
  INTEGER_PRECISION_MESSAGE,
  PRECISION_MESSAGE,
  DECIMALS_MESSAGE,
]);

/**
 * The problem code for a record's errors: `value_out_of_range` when every one of them is a value no meter can
 * store exactly as written (too large, too precise, too many decimals), `unknown_customer` when every one is a
 * customer the deployment doesn't have (or not the token's own), else `validation_failed`.
 */
export function recordErrorCode(
  errors: readonly FieldError[],
): 'value_out_of_range' | 'validation_failed' | typeof UNKNOWN_CUSTOMER {
  if (errors.length === 0) return 'validation_failed';
  if (errors.every((e) => INEXACT_VALUE_MESSAGES.has(e.message))) return VALUE_OUT_OF_RANGE;
  if (errors.every((e) => UNKNOWN_CUSTOMER_MESSAGES.has(e.message))) return UNKNOWN_CUSTOMER;
  return 'validation_failed';
}

export interface RawRecord {
  meter_id?: unknown;
  value: number;
  timestamp: string;
  id?: string;
  dimensions?: unknown;
  customer?: unknown;
  customer_id?: unknown;
}

/** A record that passed every rule, encoded for the USAGE stream. */
export interface CheckedRecord {
  id: string;
  /** The server chose the id (`use_…`). */
  assigned: boolean;
  value: number;
  tsMs: number;
  /** Its row on the USAGE stream (shared/usage/wire.ts), for UsagePublisher.submit. */
  row: Buffer;
  /** The account it is for: the emitter's, or (operator mode) its customer's. */
  account: string;
}

/** Request-wide facts the per-record rules need. */
export interface RecordContext {
  accountId: string;
  now: number;
  /**
   * The timestamps accepted, [fromMs, toMs), and what to say otherwise. Default: the ingest window (the last
   * 35 days, 5 minutes ahead); a correction's replacement records take its range instead.
   */
  window?: { fromMs: number; toMs: number; message: string };
  /**
   * Whose each record is (operator mode, shared/customers/attribution.ts). Absent (corrections): every record is
   * `accountId`'s and none may name a customer.
   */
  attribution?: Attribution;
  /**
   * Counts `records` valid records against the ingest rate of the account they are for (customer-rates.ts):
   * the status at once or once leased, or RateLimitedError (429). Set for admin emitters, whose records may be
   * many customers' (the others count a request's records at once, before anything else).
   */
  takeRecords?: (accountId: string, records: number) => RateTake;
  /**
   * takeRecords for a batch's records at once (the account of each valid record, and its customer registry slot
   * or -1): the accounts refused.
   */
  takeRecordsEach?: (
    records: readonly string[],
    slots?: ArrayLike<number>,
  ) => Map<string, RateLimitedError> | Promise<Map<string, RateLimitedError>>;
}

/**
 * THE record rules, for every ingest path (single, batch, stream): structure first (the compiled schema),
 * then the rules a schema cannot say: finite value, ≥ 0 where the meter refuses negatives (refusesNegativeValues), magnitude, decimals, timestamp syntax and
 * window, dimensions (checkDimensions: keys, values, the meter's declared keys), whose record it is
 * (ctx.attribution). Pushes every problem into `errors` (fields relative to the record) and returns undefined,
 * or returns the encoded record.
 */
export function checkRecord(
  raw: unknown,
  meter: MeterRecord,
  ctx: RecordContext,
  errors: FieldError[],
  withMeterId = false,
): CheckedRecord | undefined {
  const out = new RowWriter();
  const accounts: string[] = [];
  const id = writeRecord(out, raw, meter, ctx, errors, withMeterId, accounts);
  if (id === undefined) return undefined;
  const r = raw as RawRecord;
  return {
    id,
    assigned: r.id === undefined,
    value: r.value === 0 ? 0 : r.value,
    tsMs: parseTimestamp(r.timestamp)!,
    row: out.bytes(),
    account: accounts[0]!,
  };
}

/**
 * The usual record — `value` a number, `timestamp` a string, perhaps an `id` of 1 to 128 characters (and a
 * `meter_id` of 1 to 64), nothing else — recognised without the compiled schema's generic walk. True only
 * where the schema accepts the record too (a UTF-16 length bounds the code points the schema counts); for
 * anything else, dimensions included, the schema decides and names the problems.
 */
export function plainRecordShape(raw: unknown, withMeterId: boolean): boolean {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false;
  const r = raw as RawRecord;
  if (typeof r.value !== 'number' || typeof r.timestamp !== 'string') return false;
  let fields = 2;
  if (r.id !== undefined) {
    if (typeof r.id !== 'string' || r.id.length === 0 || r.id.length > USAGE_LIMITS.maxRecordIdLength) return false;
    fields++;
  }
  if (withMeterId) {
    if (typeof r.meter_id !== 'string' || r.meter_id.length === 0 || r.meter_id.length > MAX_METER_ID_LENGTH)
      return false;
    fields++;
  }
  if (r.customer !== undefined) {
    if (typeof r.customer !== 'string' || r.customer.length === 0 || r.customer.length > 128) return false;
    fields++;
  }
  if (r.customer_id !== undefined) {
    const c = r.customer_id;
    if (typeof c !== 'string' || c.length === 0 || c.length > MAX_CUSTOMER_ID_LENGTH) return false;
    fields++;
  }
  // No other field (own or inherited, e.g. a `__proto__` key): exactly the fields counted above.
  for (const _ in r) if (--fields < 0) return false;
  return fields === 0;
}

/**
 * checkRecord for batches: a valid record's row goes straight into `out` (one writer per request) and its
 * id is returned — no object per record — and the account it is for pushed into `accounts` when given; an
 * invalid one pushes its problems into `errors`.
 */
export function writeRecord(
  out: RowWriter,
  raw: unknown,
  meter: MeterRecord,
  ctx: RecordContext,
  errors: FieldError[],
  withMeterId: boolean,
  accounts?: string[],
): string | undefined {
  const check = withMeterId ? checkMeterRecordShape : checkRecordShape;
  const before = errors.length;
  if (!plainRecordShape(raw, withMeterId) && !check(raw)) {
    for (const e of toFieldErrors(check.errors)) errors.push(e);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  }
  const r = raw as RawRecord;
  let text: string | undefined;
  if (typeof r.value === 'number') {
    const problem = valueProblem(r.value, refusesNegativeValues(meter));
    if (problem) errors.push({ field: 'value', message: problem });
    else if ((text = decimalText(r.value)) === undefined) errors.push({ field: 'value', message: DECIMALS_MESSAGE });
  }
  let tsMs: number | undefined;
  if (typeof r.timestamp === 'string') {
    tsMs = parseTimestamp(r.timestamp);
    if (tsMs === undefined) errors.push({ field: 'timestamp', message: TIMESTAMP_FORMAT_MESSAGE });
    else if (
      ctx.window
        ? tsMs < ctx.window.fromMs || tsMs >= ctx.window.toMs
        : tsMs < ctx.now - USAGE_LIMITS.maxPastMs || tsMs > ctx.now + USAGE_LIMITS.maxFutureMs
    ) {
      errors.push({ field: 'timestamp', message: ctx.window?.message ?? TIMESTAMP_WINDOW_MESSAGE });
    }
  }
  let dims: Dimensions | undefined = NO_DIMENSIONS;
  if (r.dimensions !== undefined) {
    // The schema already named what is wrong inside `dimensions` (values): don't say it twice.
    let schemaSaidDims = false;
    for (let i = before; i < errors.length; i++) if (errors[i]!.field.startsWith('dimensions')) schemaSaidDims = true;
    dims = schemaSaidDims ? undefined : checkDimensions(r.dimensions, meter.dimensions, errors);
  }
  const account = ctx.attribution ? ctx.attribution.accountOf(r, meter, errors) : ownAccount(r, ctx.accountId, errors);
  if (errors.length > before || text === undefined || tsMs === undefined || dims === undefined) return undefined;
  accounts?.push(account!);
  const given = r.id;
  if (given === undefined) {
    const id = newUsageId();
    out.row(account!, meter.id, tsMs, id, text, ctx.now, dims);
    return id;
  }
  out.row(account!, meter.id, tsMs, tsvEscape(given), text, ctx.now, dims);
  return given;
}

/** A record without attribution (a correction's replacements): the account's own, naming no customer. */
function ownAccount(r: RawRecord, accountId: string, errors: FieldError[]): string | undefined {
  if (r.customer === undefined && r.customer_id === undefined) return accountId;
  errors.push({ field: r.customer !== undefined ? CUSTOMER_KEY : CUSTOMER_ID_KEY, message: ACCOUNT_METER_MESSAGE });
  return undefined;
}
