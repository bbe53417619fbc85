/**
 * Partial aggregates of the records a batch stores for the first time (issue 45 item 2;
 * infra/migrations/clickhouse/400_usage_partials.sql): one row per (message, account, meter, second, dimension
 * set) of the open hour, with the columns of the second rollups but the t-digest. A reader takes a pending second
 * from them instead of scanning its raw rows (read-plan.ts); the settler's recompute of the second from the raw
 * rows supersedes them.
 *
 * Exact because each stored record is in exactly one message's partial: the message that first stored it. A
 * record counts in its message's partial when its id is server-assigned (unique by construction) or was claimed by
 * this very write (claims.ts): a client's retry under the same timestamp is inserted again but its identity is
 * claimed already, so it is in no second partial. A redelivered message writes the same key (`batch`, its stream
 * sequence) with the same records or fewer (those it claimed the first time are claimed now), and the table keeps
 * the row with the most records. Without claims (USAGE_IDENTITY=timestamp) a client's retry could not be told from
 * a new record: no partials are written then.
 *
 * Costs one pass over the rows' bytes: a few native tab searches, the timestamp's and the value's digits, and a
 * byte comparison with the previous row's account, meter and dimensions (rows of one request repeat them).
 */
import { asBuffer, sameBytes } from './row-scan.js';
import { unescapeId } from './batch-rows.js';
import { HOUR_MS } from './sql.js';

export const PARTIALS_TABLE = 'usage_partials';
export const PARTIAL_COLUMNS = [
  'account_id',
  'meter_id',
  'second',
  'group_key',
  'batch',
  'dim_keys',
  'dim_values',
  'records',
  'sum',
  'min',
  'max',
  'last_ts',
  'last_id',
  'last_value',
] as const;

/** What the partials of one insert are computed from. */
export interface PartialsInput {
  /** The messages' payloads (one per message, or per message piece on a cluster), as read from the stream. */
  chunks: readonly Uint8Array[];
  /** Each chunk's message key: its stream sequence, the same on every delivery. */
  keys: readonly number[];
  /**
   * Per row of the chunks (in order): 1 when this write stores it for the first time. Undefined: every row (a
   * batch of server-assigned ids only).
   */
  fresh?: Uint8Array;
  /** The first epoch second marked per second (the open hour's first: hour-marks.ts markOf); older rows are skipped. */
  openFromSecond: number;
}

const TAB = 0x09;
const NL = 0x0a;
const MINUS = 0x2d;
const DOT = 0x2e;
const BACKSLASH = 0x5c;
const SCALE = 1_000_000_000;
const SCALE_N = 1_000_000_000n;
/** |value| < 10^6: value × 10^9 < 2^53, exact as a double. Larger values are summed as BigInt. */
const SMALL_INT_DIGITS = 6;
/** A running double sum is moved into the BigInt before it could pass 2^53. */
const FLUSH_AT = 4e15;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/** A value in units of 10^-9 (the tables' Decimal(38, 9)). */
type Units = number | bigint;

interface Group {
  /** `account\tmeter` as written in the rows (TabSeparated fields, latin1: bytes kept as they are). */
  head: string;
  second: number;
  /** `dim_keys\tdim_values` as written in the rows. */
  dims: string;
  records: number;
  sum: number;
  sumBig: bigint;
  min: Units;
  max: Units;
  lastTs: number;
  /** The latest record's id: its bytes in the group's chunk, [lastIdStart, lastIdEnd). */
  lastIdStart: number;
  lastIdEnd: number;
  /** The latest id holds a backslash (an escape in its TabSeparated bytes). */
  lastIdEscaped: boolean;
  lastValue: Units;
}

/** The value of buf[from, to) (decimalText's digits: shared/usage/value.ts) in units, or undefined if unreadable. */
export function parseUnits(buf: Buffer, from: number, to: number): Units | undefined {
  let i = from;
  const neg = buf[i] === MINUS;
  if (neg) i++;
  let int = 0;
  let j = i;
  for (; j < to && buf[j] !== DOT; j++) {
    const d = buf[j]! - 48;
    if (d < 0 || d > 9) return undefined;
    int = int * 10 + d;
  }
  const intDigits = j - i;
  if (intDigits === 0) return undefined;
  let frac = 0;
  if (j < to) {
    const fracFrom = ++j;
    for (; j < to; j++) {
      const d = buf[j]! - 48;
      if (d < 0 || d > 9) return undefined;
      frac = frac * 10 + d;
    }
    const fracDigits = to - fracFrom;
    if (fracDigits === 0 || fracDigits > 9) return undefined;
    frac *= POW10[9 - fracDigits]!;
  }
  if (intDigits <= SMALL_INT_DIGITS) {
    const u = int * SCALE + frac;
    return neg ? -u : u;
  }
  const big = BigInt(buf.toString('latin1', i, i + intDigits)) * SCALE_N + BigInt(frac);
  return neg ? -big : big;
}

/** Units as the Decimal(38, 9) text ClickHouse reads. */
export function unitsText(u: Units): string {
  let b = typeof u === 'bigint' ? u : BigInt(u);
  const neg = b < 0n;
  if (neg) b = -b;
  return `${neg ? '-' : ''}${b / SCALE_N}.${(b % SCALE_N).toString().padStart(9, '0')}`;
}

/** An id's value from its TabSeparated bytes (only ids holding a backslash need it). */
function unescapedId(buf: Buffer, from: number, to: number): Buffer {
  return Buffer.from(unescapeId(buf.toString('latin1', from, to)), 'latin1');
}

/**
 * Whether the id buf[from, to) comes after the group's latest id, as ClickHouse compares Strings (bytes, then
 * length): a byte loop over the TabSeparated bytes, which order as the ids do unless one holds an escape.
 */
function idAfter(buf: Buffer, from: number, to: number, escaped: boolean, g: Group): boolean {
  const a = g.lastIdStart;
  const b = g.lastIdEnd;
  if (escaped || g.lastIdEscaped) return Buffer.compare(unescapedId(buf, from, to), unescapedId(buf, a, b)) > 0;
  const n = Math.min(to - from, b - a);
  for (let k = 0; k < n; k++) if (buf[from + k] !== buf[a + k]) return buf[from + k]! > buf[a + k]!;
  return to - from > b - a;
}

/** Whether buf[at, at + n) repeats buf[prevAt, prevAt + n) and is followed by `next` (n < 0: no previous row). */
function repeats(buf: Buffer, at: number, prevAt: number, n: number, next: number): boolean {
  return n >= 0 && buf[at + n] === next && sameBytes(buf, at, prevAt, n);
}

/** The position of the next TAB at or after `from` (a byte loop: fields are a few bytes, a native call costs more). */
function tabFrom(buf: Buffer, from: number, end: number): number {
  let k = from;
  while (k < end && buf[k] !== TAB) k++;
  return k;
}

/**
 * The partial rows of an insert as TabSeparated lines of PARTIAL_COLUMNS (empty: nothing fresh in an open hour),
 * or undefined when a row cannot be read as expected — the insert then writes no partials and its marks say so.
 * One forward pass per row: a row repeating the previous one's account, meter and dimensions (a request's rows
 * do) is matched by a byte comparison, and only its timestamp, id and value are read.
 */
export function partialLines(input: PartialsInput): Buffer | undefined {
  const { chunks, keys, fresh, openFromSecond } = input;
  const out: string[] = [];
  let row = 0;
  for (let c = 0; c < chunks.length; c++) {
    const buf = asBuffer(chunks[c]!);
    const length = buf.length;
    const groups = new Map<string, Group>();
    let prev: Group | undefined;
    let prevStart = -1;
    let prevHeadLength = -1;
    let prevDimsStart = 0;
    let prevDimsLength = -1;
    /** The row `prev` was last updated by: rows between (not fresh, not open) break the run. */
    let lastKept = -1;
    /** The groups of the current run of rows with one account, meter and dimensions, by second. */
    const run = new Map<number, Group>();
    for (let pos = 0; pos < length; row++) {
      const start = pos;
      // account \t meter: the previous row's bytes again, or searched.
      const sameHead = repeats(buf, start, prevStart, prevHeadLength, TAB);
      const meterEnd = sameHead ? start + prevHeadLength : tabFrom(buf, tabFrom(buf, start, length) + 1, length);
      let ts = 0;
      let k = meterEnd + 1;
      for (; k < length && buf[k] !== TAB; k++) {
        const d = buf[k]! - 48;
        if (d < 0 || d > 9) return undefined;
        ts = ts * 10 + d;
      }
      const idStart = k + 1;
      let idEnd = idStart;
      let idEscaped = false;
      for (; idEnd < length && buf[idEnd] !== TAB; idEnd++) if (buf[idEnd] === BACKSLASH) idEscaped = true;
      const valueEnd = tabFrom(buf, idEnd + 1, length);
      const dimsStart = tabFrom(buf, valueEnd + 1, length) + 1; // after received_ms
      const sameDims = repeats(buf, dimsStart, prevDimsStart, prevDimsLength, NL);
      const end = sameDims ? dimsStart + prevDimsLength : buf.indexOf(NL, dimsStart);
      // Both dimension columns (one tab between them), else not a row of USAGE_COLUMNS.
      if (!sameDims && (end < 0 || tabFrom(buf, dimsStart, end) >= end)) return undefined;
      if (dimsStart > end || ts === 0) return undefined;
      pos = end + 1;
      const headLength = meterEnd - start;
      const dimsLength = end - dimsStart;
      prevStart = start;
      prevHeadLength = headLength;
      prevDimsStart = dimsStart;
      prevDimsLength = dimsLength;
      if (fresh && !fresh[row]) continue;
      const second = Math.floor(ts / 1000);
      if (second < openFromSecond) continue;
      const value = parseUnits(buf, idEnd + 1, valueEnd);
      if (value === undefined) return undefined;
      let g: Group | undefined;
      // The previous row's group: same second, and account, meter and dimensions matched above; or another
      // second of the same run of account, meter and dimensions (a request's records span a few seconds).
      if (!(sameHead && sameDims && lastKept === row - 1)) run.clear();
      if (prev && prev.second === second && run.size) g = prev;
      else if ((g = run.get(second)) === undefined) {
        const head = buf.toString('latin1', start, meterEnd);
        const dims = buf.toString('latin1', dimsStart, end);
        const key = `${head}\t${second}\t${dims}`;
        g = groups.get(key);
        if (!g)
          groups.set(
            key,
            (g = {
              head,
              second,
              dims,
              records: 0,
              sum: 0,
              sumBig: 0n,
              min: value,
              max: value,
              lastTs: -1,
              lastIdStart: 0,
              lastIdEnd: 0,
              lastIdEscaped: false,
              lastValue: value,
            }),
          );
        run.set(second, g);
      }
      prev = g;
      lastKept = row;
      g.records++;
      if (typeof value === 'number') {
        g.sum += value;
        if (g.sum > FLUSH_AT || g.sum < -FLUSH_AT) {
          g.sumBig += BigInt(g.sum);
          g.sum = 0;
        }
      } else g.sumBig += value;
      if (value < g.min) g.min = value;
      if (value > g.max) g.max = value;
      if (ts > g.lastTs || (ts === g.lastTs && idAfter(buf, idStart, idEnd, idEscaped, g))) {
        g.lastTs = ts;
        g.lastIdStart = idStart;
        g.lastIdEnd = idEnd;
        g.lastIdEscaped = idEscaped;
        g.lastValue = value;
      }
    }
    for (const g of groups.values()) {
      const [dimKeys, dimValues] = g.dims.split('\t');
      out.push(
        `${g.head}\t${g.second}\t${dimKeys}|${dimValues}\t${keys[c]}\t${g.dims}\t${g.records}\t${unitsText(g.sumBig + BigInt(g.sum))}\t${unitsText(g.min)}\t${unitsText(g.max)}\t${g.lastTs}\t${buf.toString('latin1', g.lastIdStart, g.lastIdEnd)}\t${unitsText(g.lastValue)}\n`,
      );
    }
  }
  return Buffer.from(out.join(''), 'latin1');
}

/** The first second an insert at `nowMs` marks per second: the open hour's (hour-marks.ts markOf). */
export const openHourFirstSecond = (nowMs: number) => Math.floor(nowMs / HOUR_MS) * 3600;

/** Partials are read for the open hour only: days before yesterday (UTC) are dropped, a partition each. */
export const PARTIAL_DAYS_KEPT = 2;

/** The partition (YYYYMMDD) of the oldest day kept at `nowMs`. */
export function oldestPartialDay(nowMs: number): number {
  const d = new Date(nowMs - (PARTIAL_DAYS_KEPT - 1) * 86_400_000);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}
