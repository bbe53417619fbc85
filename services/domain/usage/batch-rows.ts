/**
 * A batch of USAGE payloads read for the identity decision (claims.ts) without an object or a string per row: a
 * struct of typed arrays — where each row and its fields are in its payload, its timestamp, accept time and the
 * hash of its identity (id-hash.ts, computed once here) — plus one account and meter string per run of rows of
 * one (account, meter). An id becomes a string only for the rows that must be looked up or compared (idOf).
 */
import { hashBytes, hashEscapedBytes, hashReset, hashSeparator, hashStart, hashValue } from './id-hash.js';
import { asBuffer, sameBytes } from './row-scan.js';

const TAB = 0x09;
const NL = 0x0a;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;

/** Row flags. */
export const ASSIGNED = 1; // a server-assigned id (`use_` + 22 characters): unique by construction, never claimed
export const ESCAPED = 2; // the id holds a backslash: its payload bytes are TSV-escaped

/** Server-assigned ids: shared/usage/ids.ts. */
const ASSIGNED_ID_LENGTH = 26;
const ASSIGNED_PREFIX = Buffer.from('use_');

export interface BatchRows {
  /** The payloads, and the first row of each (rows of chunk c: chunkFrom[c] ≤ i < chunkFrom[c + 1]). */
  chunks: readonly Uint8Array[];
  bufs: Buffer[];
  chunkFrom: Uint32Array;
  count: number;
  /** Row i is bufs[chunk](start[i], end[i]) (newline included); its account and meter end at tsStart[i] − 1. */
  start: Uint32Array;
  end: Uint32Array;
  tsStart: Uint32Array;
  /** The id's bytes as in the payload (TSV-escaped): [idStart, idEnd). */
  idStart: Uint32Array;
  idEnd: Uint32Array;
  /** received_ms's digits: [receivedStart, receivedEnd). */
  receivedStart: Uint32Array;
  receivedEnd: Uint32Array;
  ts: Float64Array;
  /** When the ingress accepted it (received_ms): the window's clock. */
  received: Float64Array;
  /** recentIdHash of (account, meter, unescaped id). */
  hash: Float64Array;
  flags: Uint8Array;
  /** Index into runAccount/runMeter. */
  run: Uint32Array;
  runAccount: string[];
  runMeter: string[];
}

/** Whether buf[from, to) holds `byte` (indexOf would search the rest of the payload: quadratic). */
function hasByte(buf: Buffer, byte: number, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] === byte) return true;
  return false;
}

function isAssigned(buf: Buffer, at: number): boolean {
  for (let i = 0; i < ASSIGNED_PREFIX.length; i++) if (buf[at + i] !== ASSIGNED_PREFIX[i]) return false;
  return true;
}

/** Rows in a payload (one native search per row). */
function countRows(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(NL); i >= 0; i = buf.indexOf(NL, i + 1)) n++;
  return n;
}

/**
 * How many rows `chunks` hold when none has a client id, else undefined. A live emitter's batch has none (every id
 * server-assigned, nothing to claim): answered with one pass over the bytes, instead of batchRows' parse and hash
 * of every row, which had doubled the consumer's CPU per live record.
 */
export function rowsIfAllAssigned(chunks: readonly Uint8Array[]): number | undefined {
  let rows = 0;
  for (const chunk of chunks) {
    const buf = asBuffer(chunk);
    // Native searches for the id's tabs and the row's end: a JS loop over every byte cost as much as batchRows.
    for (let pos = 0; pos < buf.length; rows++) {
      const idStart = buf.indexOf(TAB, buf.indexOf(TAB, buf.indexOf(TAB, pos) + 1) + 1) + 1;
      const idEnd = buf.indexOf(TAB, idStart);
      if (idEnd - idStart !== ASSIGNED_ID_LENGTH || !isAssigned(buf, idStart)) return undefined;
      pos = buf.indexOf(NL, idEnd) + 1;
      if (pos === 0) break;
    }
  }
  return rows;
}

/**
 * The rows of `chunks` (TabSeparated rows in shared/usage/wire.ts column order, already checked by row-scan.ts).
 * `fold` narrows the hashes (tests force equal hashes of different identities with it).
 */
export function batchRows(chunks: readonly Uint8Array[], fold?: (hash: number) => number): BatchRows {
  const bufs = chunks.map(asBuffer);
  const n = bufs.reduce((sum, b) => sum + countRows(b), 0);
  const r: BatchRows = {
    chunks,
    bufs,
    chunkFrom: new Uint32Array(bufs.length + 1),
    count: 0,
    start: new Uint32Array(n),
    end: new Uint32Array(n),
    tsStart: new Uint32Array(n),
    idStart: new Uint32Array(n),
    idEnd: new Uint32Array(n),
    receivedStart: new Uint32Array(n),
    receivedEnd: new Uint32Array(n),
    ts: new Float64Array(n),
    received: new Float64Array(n),
    hash: new Float64Array(n),
    flags: new Uint8Array(n),
    run: new Uint32Array(n),
    runAccount: [],
    runMeter: [],
  };
  const prefix = hashStart(); // the hash after account and meter, once per run
  const h = hashStart();
  let i = 0;
  for (let c = 0; c < bufs.length; c++) {
    const buf = bufs[c]!;
    r.chunkFrom[c] = i;
    let prevStart = -1;
    let prevTsStart = -1;
    let prevAccountEnd = -1;
    for (let pos = 0; pos < buf.length && i < n; i++) {
      let accountEnd: number;
      let meterEnd: number;
      // The previous row's account and meter again (the usual case: one run per message): known by comparing
      // bytes, without searching for tabs.
      if (prevStart >= 0 && sameBytes(buf, prevStart, pos, prevTsStart - prevStart)) {
        accountEnd = pos + (prevAccountEnd - prevStart);
        meterEnd = pos + (prevTsStart - prevStart) - 1;
      } else {
        accountEnd = buf.indexOf(TAB, pos);
        meterEnd = buf.indexOf(TAB, accountEnd + 1);
        r.runAccount.push(buf.toString('utf8', pos, accountEnd));
        r.runMeter.push(buf.toString('utf8', accountEnd + 1, meterEnd));
        hashReset(prefix);
        hashBytes(prefix, buf, pos, accountEnd);
        hashSeparator(prefix);
        hashBytes(prefix, buf, accountEnd + 1, meterEnd);
        hashSeparator(prefix);
      }
      prevStart = pos;
      prevTsStart = meterEnd + 1;
      prevAccountEnd = accountEnd;
      // The timestamp's digits up to its tab (row-scan.ts checked them).
      let tsEnd = meterEnd + 1;
      const negative = buf[tsEnd] === MINUS;
      if (negative) tsEnd++;
      let ts = 0;
      for (let d = buf[tsEnd]!; d >= 0x30 && d <= 0x39; d = buf[++tsEnd]!) ts = ts * 10 + (d - 0x30);
      const idEnd = buf.indexOf(TAB, tsEnd + 1);
      const valueEnd = buf.indexOf(TAB, idEnd + 1);
      const end = buf.indexOf(NL, valueEnd + 1) + 1;
      r.run[i] = r.runAccount.length - 1;
      r.start[i] = pos;
      r.end[i] = end;
      r.tsStart[i] = meterEnd + 1;
      r.idStart[i] = tsEnd + 1;
      r.idEnd[i] = idEnd;
      r.ts[i] = negative ? -ts : ts;
      let received = 0;
      let k = valueEnd + 1;
      for (; buf[k]! >= 0x30 && buf[k]! <= 0x39; k++) received = received * 10 + (buf[k]! - 0x30);
      r.received[i] = received;
      r.receivedStart[i] = valueEnd + 1;
      r.receivedEnd[i] = k;
      let flags = idEnd - tsEnd - 1 === ASSIGNED_ID_LENGTH && isAssigned(buf, tsEnd + 1) ? ASSIGNED : 0;
      h.a = prefix.a;
      h.b = prefix.b;
      if (!hasByte(buf, BACKSLASH, tsEnd + 1, idEnd)) hashBytes(h, buf, tsEnd + 1, idEnd);
      else {
        flags |= ESCAPED;
        hashEscapedBytes(h, buf, tsEnd + 1, idEnd);
      }
      hashSeparator(h);
      r.hash[i] = fold ? fold(hashValue(h)) : hashValue(h);
      r.flags[i] = flags;
      pos = end;
    }
  }
  r.chunkFrom[bufs.length] = i;
  r.count = i;
  return r;
}

const UNESCAPE: Record<string, string> = { '\\\\': '\\', '\\t': '\t', '\\n': '\n', '\\r': '\r' };

/** An id's text as the payload escapes it (tsvEscape), unescaped. */
export const unescapeId = (id: string) => id.replace(/\\[\\tnr]/g, (e) => UNESCAPE[e]!);

/** Row i's id, unescaped. */
export function idOf(r: BatchRows, i: number, chunk = chunkOf(r, i)): string {
  const id = r.bufs[chunk]!.toString('utf8', r.idStart[i], r.idEnd[i]);
  return r.flags[i]! & ESCAPED ? unescapeId(id) : id;
}

/** The chunk row i is in. */
export function chunkOf(r: BatchRows, i: number): number {
  let lo = 0;
  let hi = r.bufs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (r.chunkFrom[mid]! <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Whether rows i and j are one identity (equal account, meter and unescaped id). */
export function sameIdentity(r: BatchRows, i: number, j: number): boolean {
  const ri = r.run[i]!;
  const rj = r.run[j]!;
  if (ri !== rj && (r.runAccount[ri] !== r.runAccount[rj] || r.runMeter[ri] !== r.runMeter[rj])) return false;
  const ci = chunkOf(r, i);
  const cj = chunkOf(r, j);
  if ((r.flags[i]! | r.flags[j]!) & ESCAPED) return idOf(r, i, ci) === idOf(r, j, cj);
  const n = r.idEnd[i]! - r.idStart[i]!;
  if (n !== r.idEnd[j]! - r.idStart[j]!) return false;
  return r.bufs[ci]!.compare(r.bufs[cj]!, r.idStart[j], r.idEnd[j], r.idStart[i], r.idEnd[i]) === 0;
}

/** The accounts of the rows that are claimed (not server-assigned). */
export function claimingAccounts(r: BatchRows): Set<string> {
  const out = new Set<string>();
  let run = -1;
  for (let i = 0; i < r.count; i++)
    if (!(r.flags[i]! & ASSIGNED) && r.run[i] !== run) out.add(r.runAccount[(run = r.run[i]!)]!);
  return out;
}
