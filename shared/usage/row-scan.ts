import { HOUR_MS } from './rollups.js';

/** Hours of each meter that a message's rows fall in: meter id → hour numbers (intDiv(ts_ms, HOUR_MS)). */
export type TouchedHours = Map<string, Set<number>>;

const TAB = 0x09;
const NL = 0x0a;
const MINUS = 0x2d;

/**
 * Reads a USAGE message's TabSeparated rows (wire.ts column order) without building a string per row:
 * checks that every row belongs to `accountId` — the account its subject `usage.<account>` names, the only
 * account that message may write — and adds the (meter, hour) pairs the rows touch to `into`. Returns why
 * the payload is unacceptable, or undefined. Costs about one native indexOf and a byte comparison per row.
 */
export function scanRows(data: Uint8Array, accountId: string, into: TouchedHours): string | undefined {
  const account = Buffer.from(accountId + '\t');
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let prevMeterStart = -1;
  let prevMeterLen = 0;
  let hours: Set<number> | undefined;
  let row = 0;
  for (let pos = 0; pos < buf.length; row++) {
    for (let i = 0; i < account.length; i++) {
      if (buf[pos + i] !== account[i]) return `row ${row} belongs to another account than its subject's (${accountId})`;
    }
    const meterStart = pos + account.length;
    const meterEnd = buf.indexOf(TAB, meterStart);
    if (meterEnd < 0) return `row ${row} has no timestamp`;
    const meterLen = meterEnd - meterStart;
    let same = hours !== undefined && meterLen === prevMeterLen;
    for (let i = 0; same && i < meterLen; i++) same = buf[meterStart + i] === buf[prevMeterStart + i];
    if (!same) {
      const meterId = buf.toString('latin1', meterStart, meterEnd);
      hours = into.get(meterId);
      if (!hours) into.set(meterId, (hours = new Set()));
      prevMeterStart = meterStart;
      prevMeterLen = meterLen;
    }
    let i = meterEnd + 1;
    const negative = buf[i] === MINUS;
    if (negative) i++;
    let ts = 0;
    const digitsFrom = i;
    for (let c = buf[i]!; c >= 0x30 && c <= 0x39; c = buf[++i]!) ts = ts * 10 + (c - 0x30);
    if (i === digitsFrom || buf[i] !== TAB) return `row ${row} has a malformed timestamp`;
    hours!.add(Math.floor((negative ? -ts : ts) / HOUR_MS));
    const end = buf.indexOf(NL, i);
    if (end < 0) return `row ${row} is not newline-terminated`;
    pos = end + 1;
  }
  return undefined;
}
