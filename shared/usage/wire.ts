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
export const USAGE_COLUMNS = ['account_id', 'meter_id', 'ts_ms', 'record_id', 'value', 'received_ms', 'dim_keys', 'dim_values'] as const;

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
 */
export class RowWriter {
  private buf: Buffer;
  private pos = 0;
  rows = 0;

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

  /** A safe integer in decimal digits. */
  private int(v: number): void {
    if (v < 0) {
      this.buf[this.pos++] = 0x2d;
      v = -v;
    }
    const b = this.buf;
    let digits = 1;
    for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
    let p = this.pos + digits;
    this.pos = p;
    do {
      const q = Math.floor(v / 10);
      b[--p] = 0x30 + (v - q * 10);
      v = q;
    } while (v > 0);
  }

  /**
   * One TabSeparated row. `valueText` comes from decimalText(); `recordId` must be tsvEscape()d when the
   * caller chose it (server-assigned ids and the ids of accounts and meters need no escaping).
   */
  row(accountId: string, meterId: string, tsMs: number, recordId: string, valueText: string, receivedMs: number, dims: Dimensions = NO_DIMENSIONS): void {
    const keys = dims.keys.length ? tsvArray(dims.keys) : '[]';
    const values = dims.keys.length ? tsvArray(dims.values) : '[]';
    // 3 bytes per UTF-16 unit at most; two integers of ≤ 20 characters; 8 separators.
    this.room(3 * (accountId.length + meterId.length + recordId.length + valueText.length + keys.length + values.length) + 64);
    this.text(accountId);
    this.buf[this.pos++] = TAB;
    this.text(meterId);
    this.buf[this.pos++] = TAB;
    this.int(tsMs);
    this.buf[this.pos++] = TAB;
    this.text(recordId);
    this.buf[this.pos++] = TAB;
    this.text(valueText);
    this.buf[this.pos++] = TAB;
    this.int(receivedMs);
    this.buf[this.pos++] = TAB;
    this.text(keys);
    this.buf[this.pos++] = TAB;
    this.text(values);
    this.buf[this.pos++] = NL;
    this.rows++;
  }

  /** The rows written so far (a view of the writer's memory: write no more after taking it). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** One row's bytes (the single-record paths and tests); batches write theirs into one RowWriter. */
export function encodeRow(accountId: string, meterId: string, tsMs: number, recordId: string, valueText: string, receivedMs: number, dims: Dimensions = NO_DIMENSIONS): Buffer {
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
