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
import { createHash } from 'node:crypto';

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

/**
 * `usage_claims.id_hash`: the first 8 bytes of MD5(account \0 meter \0 id), little-endian — what the migration
 * computes in SQL (`reinterpretAsUInt64(substring(MD5(…), 1, 8))`), as decimal text.
 */
export function idHash(account: string, meter: string, id: string): string {
  return createHash('md5')
    .update(identityKey(account, meter, id))
    .digest()
    .readBigUInt64LE(0)
    .toString();
}

/** Identities per SELECT: keeps the statement (about 21 bytes an id) and its set small. */
const LOOKUP_CHUNK = 20_000;

/**
 * Which of `rows`' identities are claimed, with the timestamps they were claimed under. `PREWHERE id_hash IN (…)`
 * on the table's key: per id and part one index granule's 8-byte hashes are read (the strings only of granules
 * holding a match), whatever the meter holds; the few hash matches are then compared in full here.
 */
export async function claimedIdentities(
  ch: ClickHouseClient,
  database: string,
  rows: readonly RowIdentity[],
  local = '',
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  const wanted = new Set<string>();
  const hashes = new Set<string>();
  for (const r of rows) {
    wanted.add(identityKey(r.account, r.meter, r.id));
    hashes.add(idHash(r.account, r.meter, r.id));
  }
  const all = [...hashes];
  for (let i = 0; i < all.length; i += LOOKUP_CHUNK) {
    const set = all.slice(i, i + LOOKUP_CHUNK).join(', ');
    const query = `SELECT account_id AS a, meter_id AS m, record_id AS r, ts_ms AS t FROM ${database}.${CLAIMS_TABLE}${local} PREWHERE id_hash IN (${set})`;
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

/** A row of usage_claims. */
export interface Claim {
  id_hash: string;
  account_id: string;
  meter_id: string;
  record_id: string;
  ts_ms: number;
  claimed_ms: number;
}

/** The claim of a row. */
export function claimOf(r: RowIdentity, now: number): Claim {
  return {
    id_hash: idHash(r.account, r.meter, r.id),
    account_id: r.account,
    meter_id: r.meter,
    record_id: r.id,
    ts_ms: r.ts,
    claimed_ms: now,
  };
}

/** A batch after its identities were looked up: the rows to insert, and the identities to claim first. */
export interface ClaimedBatch {
  /** The payloads to insert (the originals when every row is kept). */
  chunks: Uint8Array[];
  kept: number;
  dropped: number;
  claims: Claim[];
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
  claims: ClaimedBatch['claims'],
  local = '',
): Promise<void> {
  if (claims.length === 0) return;
  await ch.insert({ table: `${database}.${CLAIMS_TABLE}${local}`, values: claims, format: 'JSONEachRow' });
}
