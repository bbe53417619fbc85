import { NO_DIMENSIONS, tsvArray, type Dimensions } from './dimensions.js';

/**
 * How accepted usage travels from the ingress through the USAGE stream to the consumer.
 *
 * One JetStream message holds the records of one or more requests of one account (group commit), as
 * ClickHouse TabSeparated rows in the column order of USAGE_COLUMNS, so the consumer concatenates payloads
 * into an INSERT without parsing them. Headers:
 * - `Ml-Format: tsv2` — payload encoding (tsv1, the same rows without the dimension columns, is still read:
 *   messages stored before an upgrade); anything else is a poison message.
 * - `Ml-Count` — number of rows (sizes consumer batches without counting lines).
 * - `Ml-Deadline` — epoch ms after which the ingress no longer answers 202 for this message; a message
 *   the stream stored later than that is skipped by the consumer, because its senders were told 503.
 * - `Ml-Void: 1` — a marker the ingress publishes with the msg id of a message whose acknowledgement was
 *   lost, to learn whether that message was stored (JetStream reports the void as a duplicate) or to make
 *   sure it never will be (the void takes its msg id). Never counted.
 */
export const WIRE_FORMAT = 'tsv2';
/** The format before dimensions (issue 18): rows end after received_ms. */
export const WIRE_FORMAT_V1 = 'tsv1';
export const HDR_FORMAT = 'Ml-Format';
export const HDR_COUNT = 'Ml-Count';
export const HDR_DEADLINE = 'Ml-Deadline';
export const HDR_VOID = 'Ml-Void';

/** ClickHouse table of usage records (infra/migrations/clickhouse/300_usage_records.sql). */
export const USAGE_TABLE = 'usage_records';
export const USAGE_COLUMNS = [
  'account_id',
  'meter_id',
  'ts_ms',
  'record_id',
  'value',
  'received_ms',
  'dim_keys',
  'dim_values',
] as const;

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** TabSeparated escaping; only caller-supplied record ids can contain these characters. */
export function tsvEscape(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : s;
}

const TAB = 0x09;
const NL = 0x0a;

/**
 * Encodes rows straight into one growing Buffer: the USAGE payload of a request (or of one record) is
 * written once, in bytes, by the ingress. Cheaper than building row strings — a batch's string of
 * thousands of concatenated pieces had to be flattened and UTF-8 encoded again before publishing.
 *
 * The rows of one request mostly repeat themselves: the same account and meter, one received time, often
 * the same timestamp, no dimensions. Those runs of bytes are written once and copied (`copyWithin`, a
 * memmove) into the next row instead of being encoded character by character again (measured: a row of
 * the usual batch ≈ 2× cheaper).
 */
export class RowWriter {
  private buf: Buffer;
  private pos = 0;
  rows = 0;
  // Where the last row's repeatable parts are, and what they were written from.
  private prefixAccount: string | undefined;
  private prefixMeter: string | undefined;
  private prefixAt = 0;
  private prefixLength = 0;
  /** Where the last prefix's meter id (and its tab) is. */
  private meterAt = 0;
  private meterLength = 0;
  private tsValue = NaN;
  private tsAt = 0;
  private tsLength = 0;
  private suffixReceived = NaN;
  private suffixAt = 0;
  private suffixLength = 0;

  constructor(expectedRows = 1) {
    this.buf = Buffer.allocUnsafe(Math.max(256, expectedRows * 128));
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** `s` as UTF-8 (room for 3 bytes per UTF-16 unit reserved); ASCII byte by byte, without a native call. */
  private text(s: string): void {
    const n = s.length;
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.pos += b.write(s, this.pos, 'utf8');
        return;
      }
      b[p++] = c;
    }
    this.pos = p;
  }

  /** A safe integer in decimal digits: two int32 halves (integer division), not a float loop per digit. */
  private int(v: number): void {
    if (v < 0) {
      this.buf[this.pos++] = 0x2d;
      v = -v;
    }
    if (v < 1e8) {
      this.smallInt(v);
      return;
    }
    const high = Math.floor(v / 1e8);
    this.smallInt(high);
    let low = v - high * 1e8;
    const b = this.buf;
    const end = this.pos + 8;
    for (let p = end - 1; p >= this.pos; p--) {
      const q = (low / 10) | 0;
      b[p] = 0x30 + low - q * 10;
      low = q;
    }
    this.pos = end;
  }

  /** 0 ≤ v < 2³¹. */
  private smallInt(v: number): void {
    let digits = 1;
    for (let t = v; t >= 10; t = (t / 10) | 0) digits++;
    const b = this.buf;
    let p = this.pos + digits;
    this.pos = p;
    do {
      const q = (v / 10) | 0;
      b[--p] = 0x30 + v - q * 10;
      v = q;
    } while (v > 0);
  }

  /** Copies `length` bytes written at `from` to the end; returns where the copy starts. */
  private repeat(from: number, length: number): number {
    const at = this.pos;
    this.buf.copyWithin(at, from, from + length);
    this.pos = at + length;
    return at;
  }

  /**
   * One TabSeparated row. `valueText` comes from decimalText(); `recordId` must be tsvEscape()d when the
   * caller chose it (server-assigned ids and the ids of accounts and meters need no escaping).
   */
  row(
    accountId: string,
    meterId: string,
    tsMs: number,
    recordId: string,
    valueText: string,
    receivedMs: number,
    dims: Dimensions = NO_DIMENSIONS,
  ): void {
    const keys = dims.keys.length ? tsvArray(dims.keys) : '[]';
    const values = dims.keys.length ? tsvArray(dims.values) : '[]';
    // 3 bytes per UTF-16 unit at most; two integers of ≤ 20 characters; 8 separators.
    this.room(
      3 * (accountId.length + meterId.length + recordId.length + valueText.length + keys.length + values.length) + 64,
    );
    const b = this.buf;
    if (accountId === this.prefixAccount && meterId === this.prefixMeter) {
      this.prefixAt = this.repeat(this.prefixAt, this.prefixLength);
    } else {
      this.prefixAt = this.pos;
      this.text(accountId);
      b[this.pos++] = TAB;
      // An operator's batch: a new account (its customer) per row, the same meter — its bytes are copied.
      if (meterId === this.prefixMeter) this.meterAt = this.repeat(this.meterAt, this.meterLength);
      else {
        this.meterAt = this.pos;
        this.text(meterId);
        b[this.pos++] = TAB;
        this.meterLength = this.pos - this.meterAt;
      }
      this.prefixLength = this.pos - this.prefixAt;
      this.prefixAccount = accountId;
      this.prefixMeter = meterId;
    }
    if (tsMs === this.tsValue) {
      this.tsAt = this.repeat(this.tsAt, this.tsLength);
    } else {
      this.tsAt = this.pos;
      this.int(tsMs);
      this.tsLength = this.pos - this.tsAt;
      this.tsValue = tsMs;
    }
    b[this.pos++] = TAB;
    this.text(recordId);
    b[this.pos++] = TAB;
    this.text(valueText);
    if (dims.keys.length === 0 && receivedMs === this.suffixReceived) {
      this.suffixAt = this.repeat(this.suffixAt, this.suffixLength);
    } else {
      const at = this.pos;
      b[this.pos++] = TAB;
      this.int(receivedMs);
      b[this.pos++] = TAB;
      this.text(keys);
      b[this.pos++] = TAB;
      this.text(values);
      b[this.pos++] = NL;
      // Only a row without dimensions has a suffix worth repeating.
      if (dims.keys.length === 0) {
        this.suffixAt = at;
        this.suffixLength = this.pos - at;
        this.suffixReceived = receivedMs;
      } else this.suffixReceived = NaN;
    }
    this.rows++;
  }

  /** Bytes written so far: where the next row starts. */
  get length(): number {
    return this.pos;
  }

  /** The rows written so far (a view of the writer's memory: write no more after taking it). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** One row's bytes (the single-record paths and tests); batches write theirs into one RowWriter. */
export function encodeRow(
  accountId: string,
  meterId: string,
  tsMs: number,
  recordId: string,
  valueText: string,
  receivedMs: number,
  dims: Dimensions = NO_DIMENSIONS,
): Buffer {
  const w = new RowWriter();
  w.row(accountId, meterId, tsMs, recordId, valueText, receivedMs, dims);
  return w.bytes();
}

/** The two dimension columns of a row without dimensions. */
const NO_DIMENSION_COLUMNS = '\t[]\t[]';

/** A tsv1 payload's rows in the tsv2 column order (no dimensions). */
export function upgradeV1Rows(data: Uint8Array): Buffer {
  return Buffer.from(Buffer.from(data).toString('latin1').replace(/\n/g, `${NO_DIMENSION_COLUMNS}\n`), 'latin1');
}
