/**
 * Record identity without the timestamp (issues 27 and 45; infra/migrations/clickhouse/360_usage_claims.sql): a
 * record is (account, meter, id) within a window of accept times (USAGE_IDENTITY=window; forever with `id`).
 * `usage_claims` holds every identity stored, with the timestamp it was stored under and its accept time (the
 * row's received_ms, `claimed_ms` there). The consumer looks a batch's identities up before inserting (under the
 * account's claim lock, services/domain/usage/claim-lock.ts) and keeps only
 * - rows with no claim accepted within the window of their own accept time: claimed now, then inserted;
 * - rows claimed under their own timestamp: the same record redelivered (a crash after the claim and before the
 *   raw rows, or the ack lost), inserted again — `usage_records` keeps one row per (meter, ts, id).
 * A row claimed under another timestamp within the window (a retry that recomputed its timestamp) or repeated in
 * the batch is left out. Claims are written BEFORE the raw rows, so no crash point lets a second timestamp of an
 * identity in: whatever a crash interrupts, the message is redelivered and finds its own claim. The window is
 * measured on accept times because they travel in the rows: a redelivery, however late, re-derives the same
 * decision. Server-assigned ids (`use_…`, random) are never claimed.
 */
import { tsvEscape } from '../../../shared/usage/wire.js';

export const CLAIMS_TABLE = 'usage_claims';

/** One row of a USAGE payload: its identity and where it is in the payload. */
export interface RowIdentity {
  account: string;
  meter: string;
  id: string;
  ts: number;
  /** When the ingress accepted it (received_ms): the window's clock. */
  received: number;
  /** A server-assigned id (`use_` + 22 characters): unique by construction, never claimed. */
  assigned: boolean;
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

/** Server-assigned ids: shared/usage/ids.ts. */
const ASSIGNED_ID_LENGTH = 26;
const ASSIGNED_PREFIX = Buffer.from('use_');

function isAssigned(buf: Buffer, at: number): boolean {
  for (let i = 0; i < ASSIGNED_PREFIX.length; i++) if (buf[at + i] !== ASSIGNED_PREFIX[i]) return false;
  return true;
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
    const valueEnd = buf.indexOf(TAB, idEnd + 1);
    const end = buf.indexOf(NL, valueEnd + 1) + 1;
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
    let received = 0;
    for (let i = valueEnd + 1; buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) received = received * 10 + (buf[i]! - 0x30);
    const assigned = idEnd - tsEnd - 1 === ASSIGNED_ID_LENGTH && isAssigned(buf, tsEnd + 1);
    out.push({ account, meter, id, ts: negative ? -ts : ts, received, assigned, start: pos, end });
    pos = end;
  }
  return out;
}

/** The key of an identity in the maps below. */
export const identityKey = (account: string, meter: string, id: string) => `${account}\u0000${meter}\u0000${id}`;

/** A stored claim of an identity: the timestamp it was stored under, and when that record was accepted. */
export interface Claim {
  ts: number;
  claimed: number;
}

/** The claim of a row: a TabSeparated line of CLAIM_COLUMNS, claimed at its accept time (or `at`). */
export function claimOf(r: Omit<RowIdentity, 'assigned'>, at = r.received): string {
  return `${tsvEscape(r.account)}\t${tsvEscape(r.meter)}\t${tsvEscape(r.id)}\t${r.ts}\t${at}\n`;
}

/** A batch after its identities were looked up: the rows to insert, and the identities to claim first. */
export interface ClaimedBatch {
  /** The payloads to insert (the originals when every row is kept). */
  chunks: Uint8Array[];
  kept: number;
  dropped: number;
  /** TabSeparated lines (claimOf). */
  claims: string[];
  /** The rows claimed (the lines' identities). */
  claimed: RowIdentity[];
}

/**
 * The rows of `chunks` to insert given what is `claimed` (the stored claims of the rows looked up; a row not
 * looked up has none within the window: claim-lock.ts): a row counts if it is the first occurrence of its identity
 * in the batch and no claim of it was accepted within `windowMs` of its own accept time (it is claimed), or if it
 * is claimed under its own timestamp (the same record again). Server-assigned ids always count.
 */
export function keepUnclaimed(
  chunks: readonly Uint8Array[],
  rowsOf: readonly RowIdentity[][],
  claimed: ReadonlyMap<string, readonly Claim[]>,
  windowMs = Number.POSITIVE_INFINITY,
): ClaimedBatch {
  const seen = new Set<string>();
  const out: ClaimedBatch = { chunks: [], kept: 0, dropped: 0, claims: [], claimed: [] };
  for (const [i, data] of chunks.entries()) {
    const rows = rowsOf[i]!;
    const keep: RowIdentity[] = [];
    for (const r of rows) {
      if (r.assigned) {
        keep.push(r);
        continue;
      }
      const k = identityKey(r.account, r.meter, r.id);
      if (seen.has(k)) continue;
      seen.add(k);
      const claims = claimed.get(k) ?? [];
      if (claims.some((c) => c.ts === r.ts)) keep.push(r);
      else if (!claims.some((c) => Math.abs(c.claimed - r.received) < windowMs)) {
        keep.push(r);
        out.claims.push(claimOf(r));
        out.claimed.push(r);
      }
    }
    out.kept += keep.length;
    out.dropped += rows.length - keep.length;
    if (keep.length === rows.length) out.chunks.push(data);
    else if (keep.length) out.chunks.push(Buffer.concat(keep.map((r) => data.subarray(r.start, r.end))));
  }
  return out;
}
