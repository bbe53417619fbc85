/**
 * Record identity without the timestamp (issue 27; infra/migrations/clickhouse/360_usage_claims.sql): a record
 * is (account, meter, id). `usage_claims` holds every identity ever stored, with the timestamp it was stored
 * under. The consumer looks each batch's identities up before inserting (under the account's claim lock,
 * services/roles/consumer/claim-lock.ts) and keeps only
 * - rows whose identity nobody claimed: claimed now, then inserted;
 * - rows claimed under their own timestamp: the same record redelivered (a crash after the claim and before the
 *   raw rows, or the ack lost), inserted again — `usage_records` keeps one row per (meter, ts, id).
 * A row claimed under another timestamp (a retry that recomputed its timestamp) or repeated in the batch is left
 * out. Claims are written BEFORE the raw rows and kept forever, so no crash point lets a second timestamp of an
 * identity in: whatever a crash interrupts, the message is redelivered and finds its own claim.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { chString } from './sql.js';

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

/** The identities of a payload's TabSeparated rows (wire.ts column order; already checked by row-scan.ts). */
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
      buf.compare(buf, prevStart, prevMeterEnd, pos, meterEnd) !== 0
    ) {
      account = buf.toString('utf8', pos, accountEnd);
      meter = buf.toString('utf8', accountEnd + 1, meterEnd);
    }
    prevStart = pos;
    prevAccountEnd = accountEnd;
    prevMeterEnd = meterEnd;
    let id = buf.toString('utf8', tsEnd + 1, idEnd);
    if (buf.indexOf(BACKSLASH, tsEnd + 1) < idEnd && buf.indexOf(BACKSLASH, tsEnd + 1) >= 0)
      id = id.replace(/\\[\\tnr]/g, (e) => UNESCAPE[e]!);
    out.push({ account, meter, id, ts: Number(buf.toString('latin1', meterEnd + 1, tsEnd)), start: pos, end });
    pos = end;
  }
  return out;
}

/** The key of an identity in the maps below. */
export const identityKey = (account: string, meter: string, id: string) => `${account}\u0000${meter}\u0000${id}`;

/** Identities per SELECT: with their text, a lookup stays a few MiB (max_query_size is raised to fit). */
const LOOKUP_CHUNK = 20_000;

/**
 * Which of `rows`' identities are claimed, with the timestamps they were claimed under. One condition per
 * (account, meter): `account_id = … AND meter_id = … AND record_id IN (…)` is a set of point ranges of the table's
 * key, so a lookup reads the index granules holding the batch's ids (≈ 8,192 rows each), not the meter's claims.
 */
export async function claimedIdentities(
  ch: ClickHouseClient,
  database: string,
  rows: readonly RowIdentity[],
  local = '',
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (let i = 0; i < rows.length; i += LOOKUP_CHUNK) {
    const byMeter = new Map<string, { account: string; meter: string; ids: Set<string> }>();
    for (const r of rows.slice(i, i + LOOKUP_CHUNK)) {
      const k = `${r.account}\u0000${r.meter}`;
      let e = byMeter.get(k);
      if (!e) byMeter.set(k, (e = { account: r.account, meter: r.meter, ids: new Set() }));
      e.ids.add(r.id);
    }
    const where = [...byMeter.values()]
      .map(
        (e) =>
          `(account_id = ${chString(e.account)} AND meter_id = ${chString(e.meter)} AND record_id IN (${[...e.ids].map(chString).join(', ')}))`,
      )
      .join(' OR ');
    const query = `SELECT account_id AS a, meter_id AS m, record_id AS r, ts_ms AS t FROM ${database}.${CLAIMS_TABLE}${local} WHERE ${where}`;
    const rs = await ch.query({
      query,
      format: 'JSONEachRow',
      clickhouse_settings: { max_query_size: String(Math.max(262_144, 2 * Buffer.byteLength(query))) },
    });
    for (const { a, m, r, t } of await rs.json<{ a: string; m: string; r: string; t: string | number }>()) {
      const k = identityKey(a, m, r);
      const list = out.get(k);
      if (list) list.push(Number(t));
      else out.set(k, [Number(t)]);
    }
  }
  return out;
}

/** A batch after its identities were looked up: the rows to insert, and the identities to claim first. */
export interface ClaimedBatch {
  /** The payloads to insert (the originals when every row is kept). */
  chunks: Uint8Array[];
  kept: number;
  dropped: number;
  claims: { account_id: string; meter_id: string; record_id: string; ts_ms: number; claimed_ms: number }[];
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
      if (!claim)
        out.claims.push({ account_id: r.account, meter_id: r.meter, record_id: r.id, ts_ms: r.ts, claimed_ms: now });
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
  claims: ClaimedBatch['claims'],
  local = '',
): Promise<void> {
  if (claims.length === 0) return;
  await ch.insert({ table: `${database}.${CLAIMS_TABLE}${local}`, values: claims, format: 'JSONEachRow' });
}
