/**
 * Record identity without the timestamp (issue 27; infra/migrations/clickhouse/360_usage_claims.sql): a record
 * is (account, meter, id). `usage_claims` holds every identity ever stored, with the timestamp it was stored
 * under. The consumer looks each batch's identities up before inserting (under the account's claim lock,
 * services/domain/usage/claim-lock.ts) and keeps only
 * - rows whose identity nobody claimed: claimed now, then inserted;
 * - rows claimed under their own timestamp: the same record redelivered (a crash after the claim and before the
 *   raw rows, or the ack lost), inserted again — `usage_records` keeps one row per (meter, ts, id).
 * A row claimed under another timestamp (a retry that recomputed its timestamp) or repeated in the batch is left
 * out. Claims are written BEFORE the raw rows and kept forever, so no crash point lets a second timestamp of an
 * identity in: whatever a crash interrupts, the message is redelivered and finds its own claim.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { chString } from './sql.js';
import { tsvEscape } from '../../../shared/usage/wire.js';

export const CLAIMS_TABLE = 'usage_claims';

/** One row of a USAGE payload: its identity and where it is in the payload. */
export interface RowIdentity {
  account: string;
  meter: string;
  id: string;
  ts: number;
  /** The row's bytes, newline included: payload[start, end). */
  start: number;
  end: number;
}

const TAB = 0x09;
const NL = 0x0a;
const BACKSLASH = 0x5c;
const UNESCAPE: Record<string, string> = { '\\\\': '\\', '\\t': '\t', '\\n': '\n', '\\r': '\r' };

/** Whether buf[a, a + n) equals buf[b, b + n). */
function sameBytes(buf: Buffer, a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/** Whether buf[from, to) holds `byte` (indexOf would search the rest of the payload: quadratic). */
function hasByte(buf: Buffer, byte: number, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] === byte) return true;
  return false;
}

/** The identities of a payload's TabSeparated rows (shared/usage/wire.ts column order; already checked by row-scan.ts). */
export function rowIdentities(data: Uint8Array): RowIdentity[] {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out: RowIdentity[] = [];
  let account = '';
  let meter = '';
  let prevAccountEnd = -1;
  let prevMeterEnd = -1;
  let prevStart = -1;
  for (let pos = 0; pos < buf.length; ) {
    const accountEnd = buf.indexOf(TAB, pos);
    const meterEnd = buf.indexOf(TAB, accountEnd + 1);
    const tsEnd = buf.indexOf(TAB, meterEnd + 1);
    const idEnd = buf.indexOf(TAB, tsEnd + 1);
    const end = buf.indexOf(NL, idEnd + 1) + 1;
    // One string per run of rows of an account and meter (a message is mostly one of each).
    if (
      prevStart < 0 ||
      accountEnd - pos !== prevAccountEnd - prevStart ||
      meterEnd - accountEnd !== prevMeterEnd - prevAccountEnd ||
      !sameBytes(buf, prevStart, pos, meterEnd - pos)
    ) {
      account = buf.toString('utf8', pos, accountEnd);
      meter = buf.toString('utf8', accountEnd + 1, meterEnd);
    }
    prevStart = pos;
    prevAccountEnd = accountEnd;
    prevMeterEnd = meterEnd;
    let id = buf.toString('utf8', tsEnd + 1, idEnd);
    if (hasByte(buf, BACKSLASH, tsEnd + 1, idEnd)) id = id.replace(/\\[\\tnr]/g, (e) => UNESCAPE[e]!);
    let ts = 0;
    const negative = buf[meterEnd + 1] === 0x2d;
    for (let i = negative ? meterEnd + 2 : meterEnd + 1; i < tsEnd; i++) ts = ts * 10 + (buf[i]! - 0x30);
    out.push({ account, meter, id, ts: negative ? -ts : ts, start: pos, end });
    pos = end;
  }
  return out;
}

/** The key of an identity in the maps below. */
export const identityKey = (account: string, meter: string, id: string) => `${account}\u0000${meter}\u0000${id}`;

/** Meters per lookup SELECT (one IN subquery each), and ids per meter and SELECT. */
const LOOKUP_METERS = 50;
const LOOKUP_IDS = 50_000;

/**
 * The condition selecting the claims of `ids` of one meter: the hashes are computed by ClickHouse from ONE array
 * literal (18.16 parses `[…]` of literals as one value, while an IN list of 50,000 elements passes
 * max_ast_elements and is evaluated element by element), and `id_hash IN (subquery)` uses the table's key
 * (use_index_for_in_with_subqueries): per id and part one granule of the meter's hashes is read.
 */
export function claimsOfSql(account: string, meter: string, ids: Iterable<string>): string {
  const prefix = `${account}\u0000${meter}\u0000`;
  const list = [...ids].map((id) => chString(prefix + id)).join(', ');
  return `(account_id = ${chString(account)} AND meter_id = ${chString(meter)} AND id_hash IN (SELECT reinterpretAsUInt64(substring(MD5(arrayJoin([${list}])), 1, 8))))`;
}

/**
 * Which of `rows`' identities are claimed, with the timestamps they were claimed under (hash matches are
 * compared in full here).
 */
export async function claimedIdentities(
  ch: ClickHouseClient,
  database: string,
  rows: readonly RowIdentity[],
  local = '',
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  const wanted = new Set<string>();
  const byMeter = new Map<string, { account: string; meter: string; ids: Set<string> }>();
  for (const r of rows) {
    wanted.add(identityKey(r.account, r.meter, r.id));
    const k = `${r.account}\u0000${r.meter}`;
    let e = byMeter.get(k);
    if (!e) byMeter.set(k, (e = { account: r.account, meter: r.meter, ids: new Set() }));
    e.ids.add(r.id);
  }
  const conditions: string[] = [];
  for (const e of byMeter.values()) {
    const ids = [...e.ids];
    for (let i = 0; i < ids.length; i += LOOKUP_IDS)
      conditions.push(claimsOfSql(e.account, e.meter, ids.slice(i, i + LOOKUP_IDS)));
  }
  for (let i = 0; i < conditions.length; i += LOOKUP_METERS) {
    const query = `SELECT account_id AS a, meter_id AS m, record_id AS r, ts_ms AS t FROM ${database}.${CLAIMS_TABLE}${local} WHERE ${conditions.slice(i, i + LOOKUP_METERS).join(' OR ')}`;
    const rs = await ch.query({
      query,
      format: 'JSONEachRow',
      clickhouse_settings: { max_query_size: String(Math.max(262_144, 2 * query.length)) },
    });
    for (const { a, m, r, t } of await rs.json<{ a: string; m: string; r: string; t: string | number }>()) {
      const k = identityKey(a, m, r);
      if (!wanted.has(k)) continue; // another identity with the same hash
      const list = out.get(k);
      if (list) list.push(Number(t));
      else out.set(k, [Number(t)]);
    }
  }
  return out;
}

/** usage_claims' columns as written (id_hash is computed by ClickHouse). */
const CLAIM_COLUMNS = ['account_id', 'meter_id', 'record_id', 'ts_ms', 'claimed_ms'] as const;

/** The claim of a row: a TabSeparated line of CLAIM_COLUMNS. */
export function claimOf(r: RowIdentity, now: number): string {
  return `${tsvEscape(r.account)}\t${tsvEscape(r.meter)}\t${tsvEscape(r.id)}\t${r.ts}\t${now}\n`;
}

/** A batch after its identities were looked up: the rows to insert, and the identities to claim first. */
export interface ClaimedBatch {
  /** The payloads to insert (the originals when every row is kept). */
  chunks: Uint8Array[];
  kept: number;
  dropped: number;
  /** TabSeparated lines (claimOf). */
  claims: string[];
}

/**
 * The rows of `chunks` to insert given what is `claimed`: a row counts if its identity is unclaimed (first
 * occurrence in the batch) or claimed under its own timestamp (the same record again).
 */
export function keepUnclaimed(
  chunks: readonly Uint8Array[],
  rowsOf: readonly RowIdentity[][],
  claimed: ReadonlyMap<string, readonly number[]>,
  now = Date.now(),
): ClaimedBatch {
  const seen = new Set<string>();
  const out: ClaimedBatch = { chunks: [], kept: 0, dropped: 0, claims: [] };
  for (const [i, data] of chunks.entries()) {
    const rows = rowsOf[i]!;
    const keep: RowIdentity[] = [];
    for (const r of rows) {
      const k = identityKey(r.account, r.meter, r.id);
      if (seen.has(k)) continue;
      seen.add(k);
      const claim = claimed.get(k);
      if (claim && !claim.includes(r.ts)) continue;
      keep.push(r);
      if (!claim) out.claims.push(claimOf(r, now));
    }
    out.kept += keep.length;
    out.dropped += rows.length - keep.length;
    if (keep.length === rows.length) out.chunks.push(data);
    else if (keep.length) out.chunks.push(Buffer.concat(keep.map((r) => data.subarray(r.start, r.end))));
  }
  return out;
}

/** Stores claims (the migration's column order). */
export async function insertClaims(
  ch: ClickHouseClient,
  database: string,
  claims: readonly string[],
  local = '',
): Promise<void> {
  if (claims.length === 0) return;
  await ch.insert({
    table: `${database}.${CLAIMS_TABLE}${local}`,
    values: Readable.from([Buffer.from(claims.join(''))], { objectMode: false }),
    format: 'TabSeparated',
    columns: [...CLAIM_COLUMNS],
  });
}
