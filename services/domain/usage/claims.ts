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
import { ASSIGNED, batchRows, chunkOf, ESCAPED, idOf, sameIdentity, type BatchRows } from './batch-rows.js';
import { HashIndex53, HashSet53 } from './hash-set.js';

export const CLAIMS_TABLE = 'usage_claims';

/** An identity as claimed: (account, meter, id), the timestamp it is stored under and its accept time. */
export interface ClaimIdentity {
  account: string;
  meter: string;
  id: string;
  ts: number;
  /** When the ingress accepted it (received_ms): the window's clock. */
  received: number;
  /** The stream sequence of the message that claimed it (0: none, e.g. a correction's row): partials.ts. */
  batch?: number;
}

const TAB = 0x09;
const NL = 0x0a;

/** The key of an identity in the maps below. */
export const identityKey = (account: string, meter: string, id: string) => `${account}\u0000${meter}\u0000${id}`;

/** A stored claim of an identity: the timestamp it was stored under, and when that record was accepted. */
export interface Claim {
  ts: number;
  claimed: number;
  /** The message that claimed it (ClaimIdentity.batch); absent or 0: unknown. */
  batch?: number;
}

/** The claim of a row: a TabSeparated line of CLAIM_COLUMNS, claimed at its accept time (or `at`). */
export function claimOf(r: ClaimIdentity, at = r.received): string {
  return `${tsvEscape(r.account)}\t${tsvEscape(r.meter)}\t${tsvEscape(r.id)}\t${r.ts}\t${at}\t${r.batch ?? 0}\n`;
}

/** A batch after its identities were looked up: the rows to insert, and the identities to claim first. */
export interface ClaimedBatch {
  /** The payloads to insert (the originals when every row is kept). */
  chunks: Uint8Array[];
  kept: number;
  dropped: number;
  /** TabSeparated lines of the rows claimed (claimOf's bytes), one buffer. */
  claims: Buffer;
  /** The rows claimed: their numbers in the batch's rows (batch-rows.ts). */
  claimed: Uint32Array;
  /**
   * Per row: 1 when this batch stores it for the first time (claimed now, or server-assigned) — what its
   * message's partial counts (partials.ts). Undefined: every row (no client id in the batch).
   */
  fresh?: Uint8Array;
}

const NO_CLAIMS: readonly Claim[] = [];

/**
 * The rows of a batch to insert given what is `claimed` (the stored claims of the rows `lookedUp`; a row not
 * looked up has none within the window: claim-lock.ts): a row counts if it is the first occurrence of its identity
 * in the batch and no claim of it was accepted within `windowMs` of its own accept time (it is claimed), or if it
 * is claimed under its own timestamp (the same record again). Server-assigned ids always count.
 * Per row this costs hash-table probes on its precomputed hash: identities are compared in full only when hashes
 * are equal, and a row's id becomes a string only when it was looked up.
 */
export function keepUnclaimed(
  rows: BatchRows,
  lookedUp: ArrayLike<number>,
  claimed: ReadonlyMap<string, readonly Claim[]>,
  windowMs = Number.POSITIVE_INFINITY,
  keys?: readonly number[],
): ClaimedBatch {
  const { hash, flags, ts, received } = rows;
  // Which rows may have stored claims: those sharing a hash with a row looked up.
  let consult: HashSet53 | null = null;
  if (claimed.size) {
    consult = new HashSet53(lookedUp.length);
    for (let k = 0; k < lookedUp.length; k++) consult.add(hash[lookedUp[k]!]!);
  }
  // The first occurrences so far: the last one of each hash, and before it the others of that hash (nextSame).
  const firstOf = new HashIndex53(rows.count);
  const nextSame = new Int32Array(rows.count);
  const keep = new Uint8Array(rows.count);
  const fresh = new Uint8Array(rows.count);
  const claimedRows: number[] = [];
  let chunk = 0;
  for (let i = 0; i < rows.count; i++) {
    while (rows.chunkFrom[chunk + 1]! <= i) chunk++;
    if (flags[i]! & ASSIGNED) {
      keep[i] = 1;
      fresh[i] = 1;
      continue;
    }
    const h = hash[i]!;
    const last = firstOf.get(h);
    let repeated = false;
    for (let j = last; j >= 0 && !repeated; j = nextSame[j]!) repeated = sameIdentity(rows, i, j);
    if (repeated) continue;
    nextSame[i] = last;
    firstOf.set(h, i);
    let claims = NO_CLAIMS;
    if (consult?.has(h)) {
      const run = rows.run[i]!;
      claims = claimed.get(identityKey(rows.runAccount[run]!, rows.runMeter[run]!, idOf(rows, i))) ?? NO_CLAIMS;
    }
    if (claims.length && claims.some((c) => c.ts === ts[i])) {
      keep[i] = 1;
      // Stored first by this very message (a redelivery): still this message's record in its partial.
      const key = keys?.[chunk] ?? 0;
      if (key > 0 && claims.some((c) => c.ts === ts[i] && c.batch === key)) fresh[i] = 1;
    } else if (claims.length === 0 || !claims.some((c) => Math.abs(c.claimed - received[i]!) < windowMs)) {
      keep[i] = 1;
      fresh[i] = 1;
      claimedRows.push(i);
    }
  }
  const out: ClaimedBatch = {
    chunks: [],
    kept: 0,
    dropped: 0,
    claims: claimLines(rows, claimedRows, undefined, keys),
    claimed: Uint32Array.from(claimedRows),
    fresh,
  };
  for (let c = 0; c < rows.bufs.length; c++) {
    const from = rows.chunkFrom[c]!;
    const to = rows.chunkFrom[c + 1]!;
    let bytes = 0;
    let n = 0;
    for (let i = from; i < to; i++)
      if (keep[i]) {
        n++;
        bytes += rows.end[i]! - rows.start[i]!;
      }
    out.kept += n;
    out.dropped += to - from - n;
    if (n === to - from) out.chunks.push(rows.chunks[c]!);
    else if (n) {
      const buf = rows.bufs[c]!;
      const part = Buffer.allocUnsafe(bytes);
      let at = 0;
      for (let i = from; i < to; i++) if (keep[i]) at = copyBytes(buf, rows.start[i]!, rows.end[i]!, part, at);
      out.chunks.push(part);
    }
  }
  return out;
}

/**
 * The claims of `claimedRows` as claimOf writes them, copied from the payloads: a row holds its account, meter,
 * timestamp, id (escaped as the table reads it) and accept time in those bytes. A row whose id holds an escape is
 * written by claimOf itself (its payload's escaping is then not trusted to be claimOf's).
 */
function claimLines(rows: BatchRows, claimedRows: ArrayLike<number>, at?: number, keys?: readonly number[]): Buffer {
  if (claimedRows.length === 0) return EMPTY;
  const { start, tsStart, idStart, idEnd, receivedStart, receivedEnd } = rows;
  const atText = at === undefined ? undefined : Buffer.from(String(at));
  // Each chunk's message key, as the claim's last field (`\t<batch>`).
  const batchText = rows.bufs.map((_, c) => Buffer.from(`\t${keys?.[c] ?? 0}`));
  const slow = new Map<number, Buffer>();
  let bytes = 0;
  let chunk = 0;
  for (let k = 0; k < claimedRows.length; k++) {
    const i = claimedRows[k]!;
    while (rows.chunkFrom[chunk + 1]! <= i) chunk++; // claimedRows ascend
    bytes += batchText[chunk]!.length;
    if (rows.flags[i]! & ESCAPED) {
      const c = chunkOf(rows, i);
      const run = rows.run[i]!;
      const line = Buffer.from(
        claimOf(
          {
            account: rows.runAccount[run]!,
            meter: rows.runMeter[run]!,
            id: idOf(rows, i, c),
            ts: rows.ts[i]!,
            received: rows.received[i]!,
            batch: keys?.[c] ?? 0,
          },
          at,
        ),
      );
      slow.set(i, line);
      bytes += line.length - batchText[chunk]!.length;
    } else bytes += idEnd[i]! - start[i]! + (atText?.length ?? receivedEnd[i]! - receivedStart[i]!) + 2; // the row's bytes up to its id, 2 tabs, a newline (its id's tab moved)
  }
  const out = Buffer.allocUnsafe(bytes);
  let pos = 0;
  let c = 0;
  for (let k = 0; k < claimedRows.length; k++) {
    const i = claimedRows[k]!;
    while (rows.chunkFrom[c + 1]! <= i) c++; // claimedRows ascend
    const line = slow.get(i);
    if (line) {
      pos += line.copy(out, pos);
      continue;
    }
    const buf = rows.bufs[c]!;
    pos = copyBytes(buf, start[i]!, tsStart[i]!, out, pos); // account \t meter \t
    pos = copyBytes(buf, idStart[i]!, idEnd[i]!, out, pos);
    out[pos++] = TAB;
    pos = copyBytes(buf, tsStart[i]!, idStart[i]! - 1, out, pos);
    out[pos++] = TAB;
    pos = atText
      ? copyBytes(atText, 0, atText.length, out, pos)
      : copyBytes(buf, receivedStart[i]!, receivedEnd[i]!, out, pos);
    pos = copyBytes(batchText[c]!, 0, batchText[c]!.length, out, pos);
    out[pos++] = NL;
  }
  return out;
}

/**
 * The claims of every row of `payload`, claimed at `at` (not at their accept times): a correction's replacement
 * rows are claimed before they are inserted, as the consumer claims its rows (corrections-store.ts).
 */
export function claimsOfPayload(payload: Uint8Array, at: number): Buffer {
  const rows = batchRows([payload]);
  return claimLines(
    rows,
    Uint32Array.from({ length: rows.count }, (_, i) => i),
    at,
  );
}

const EMPTY = Buffer.alloc(0);

/**
 * src[from, to) into dst at `at`; returns the position after it. A byte loop: the fields copied are a few bytes
 * each, where Buffer#copy's per-call cost (argument checks, a native call) was a third of the decision's time.
 */
function copyBytes(src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number): number {
  for (let k = from; k < to; k++) dst[at++] = src[k]!;
  return at;
}
