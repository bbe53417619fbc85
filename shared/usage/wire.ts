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

/** The two dimension columns of a row without dimensions. */
const NO_DIMENSION_COLUMNS = '\t[]\t[]';

/**
 * One TabSeparated row. `valueText` comes from decimalText(); `recordId` must be tsvEscape()d when the
 * caller chose it (server-assigned ids and the ids of accounts and meters need no escaping).
 */
export function encodeRow(accountId: string, meterId: string, tsMs: number, recordId: string, valueText: string, receivedMs: number, dims: Dimensions = NO_DIMENSIONS): string {
  const dimColumns = dims.keys.length ? `\t${tsvArray(dims.keys)}\t${tsvArray(dims.values)}` : NO_DIMENSION_COLUMNS;
  return `${accountId}\t${meterId}\t${tsMs}\t${recordId}\t${valueText}\t${receivedMs}${dimColumns}\n`;
}

/** A tsv1 payload's rows in the tsv2 column order (no dimensions). */
export function upgradeV1Rows(data: Uint8Array): Buffer {
  return Buffer.from(Buffer.from(data).toString('latin1').replace(/\n/g, `${NO_DIMENSION_COLUMNS}\n`), 'latin1');
}
