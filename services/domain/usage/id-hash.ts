/**
 * The 53-bit hash of a record identity (account, meter, id) that the identity window's memory holds
 * (recent-ids.ts): two FNV-1a passes over the UTF-8 bytes of the account, the meter and the UNESCAPED id, each
 * followed by a separator step. Computed from two sides that must agree byte for byte: straight from a USAGE
 * payload's row (batch-rows.ts: the id TSV-escaped there, unescaped while hashing) and from the strings of stored
 * claims (recentIdHash: encoded to UTF-8 while hashing). Only an index: a match is always checked in full.
 */

const PRIME = 0x01000193;
const A0 = 0x811c9dc5;
const B0 = 0x050c5d1f;

/** A hash in progress: its two 32-bit lanes. */
export interface HashState {
  a: number;
  b: number;
}

export const hashStart = (): HashState => ({ a: A0, b: B0 });

/** Back to the start (a state reused, not allocated, per run of rows). */
export function hashReset(s: HashState): void {
  s.a = A0;
  s.b = B0;
}

/** One byte into both lanes. */
function byte(s: HashState, c: number): void {
  s.a = Math.imul(s.a ^ c, PRIME);
  s.b = Math.imul(s.b ^ c, PRIME) ^ (s.b >>> 15);
}

/** The end of one part (account, meter, id): "ab"+"c" and "a"+"bc" hash differently. */
export function hashSeparator(s: HashState): void {
  s.a = Math.imul(s.a, PRIME);
  s.b = Math.imul(s.b, PRIME);
}

/** The 53-bit value of a finished hash. */
export const hashValue = (s: HashState): number => (s.a >>> 0) * 0x200000 + ((s.b >>> 0) & 0x1fffff);

/** buf[from, to) as they are (an account's or meter's bytes, which hold no escapes). */
export function hashBytes(s: HashState, buf: Uint8Array, from: number, to: number): void {
  let a = s.a;
  let b = s.b;
  for (let i = from; i < to; i++) {
    const c = buf[i]!;
    a = Math.imul(a ^ c, PRIME);
    b = Math.imul(b ^ c, PRIME) ^ (b >>> 15);
  }
  s.a = a;
  s.b = b;
}

const BACKSLASH = 0x5c;
/** The escapes shared/usage/wire.ts tsvEscape writes, by the byte after the backslash (claims.ts UNESCAPE too). */
const UNESCAPED: Record<number, number> = { 92: 0x5c, 116: 0x09, 110: 0x0a, 114: 0x0d };

/** buf[from, to), a TSV-escaped id, as its unescaped bytes (a backslash before any other byte is kept as is). */
export function hashEscapedBytes(s: HashState, buf: Uint8Array, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const c = buf[i]!;
    const e = c === BACKSLASH && i + 1 < to ? UNESCAPED[buf[i + 1]!] : undefined;
    if (e === undefined) byte(s, c);
    else {
      byte(s, e);
      i++;
    }
  }
}

/** The UTF-8 bytes of `str` (a lone surrogate as U+FFFD, as Buffer.from writes it). */
export function hashString(s: HashState, str: string): void {
  for (let i = 0; i < str.length; i++) {
    let c = str.charCodeAt(i);
    if (c < 0x80) {
      byte(s, c);
      continue;
    }
    if (c < 0x800) {
      byte(s, 0xc0 | (c >> 6));
      byte(s, 0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < str.length ? str.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        byte(s, 0xf0 | (cp >> 18));
        byte(s, 0x80 | ((cp >> 12) & 0x3f));
        byte(s, 0x80 | ((cp >> 6) & 0x3f));
        byte(s, 0x80 | (cp & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    byte(s, 0xe0 | (c >> 12));
    byte(s, 0x80 | ((c >> 6) & 0x3f));
    byte(s, 0x80 | (c & 0x3f));
  }
}

/** The hash of an identity given as strings (a stored claim; tests). */
export function recentIdHash(account: string, meter: string, id: string): number {
  const s = hashStart();
  hashString(s, account);
  hashSeparator(s);
  hashString(s, meter);
  hashSeparator(s);
  hashString(s, id);
  hashSeparator(s);
  return hashValue(s);
}
