/** Rows are counted per epoch second: an open hour is marked per second (./hour-marks.ts). */
const SECOND_MS = 1_000;

/**
 * Seconds of each meter that a message's rows fall in: meter id → epoch second (intDiv(ts_ms, 1000)) → rows. The
 * insert marks them (services/domain/usage/hour-marks.ts): per second in an hour still open, per hour otherwise.
 */
export type TouchedHours = Map<string, Map<number, number>>;

/** Account → the (meter, second) counts its rows touch. */
export type TouchedByAccount = Map<string, TouchedHours>;

const TAB = 0x09;
const NL = 0x0a;
const MINUS = 0x2d;

/** A payload as a Buffer (no copy). */
export const asBuffer = (data: Uint8Array) =>
  Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);

/** Whether buf[a, a + n) equals buf[b, b + n). */
export function sameBytes(buf: Buffer, a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/**
 * Reads a USAGE message's TabSeparated rows (shared/usage/wire.ts column order) without building a string per row:
 * checks that every row belongs to `accountId` — the account its subject `usage.<account>` names, the only
 * account that message may write — and counts the rows of each (meter, second) into `into` (what the insert
 * marks: services/domain/usage/hour-marks.ts). Returns why the payload is unacceptable, or undefined. Costs about one native
 * indexOf, a byte comparison and a counter per row.
 */
export function scanRows(data: Uint8Array, accountId: string, into: TouchedHours): string | undefined {
  const account = Buffer.from(accountId + '\t');
  return scan(asBuffer(data), {
    check(buf, pos) {
      for (let i = 0; i < account.length; i++)
        if (buf[pos + i] !== account[i]) return `belongs to another account than its subject's (${accountId})`;
      return pos + account.length - 1;
    },
    touched: () => into,
  });
}

/**
 * scanRows for a message of an operator's emitter (the attributed subject, `usage.customers.<emitter>`), whose
 * rows belong to many accounts: counts each row's (meter, second) under its own account. A run of rows of
 * one account costs a byte comparison, not a string. Returns why the payload is unacceptable, or undefined.
 */
export function scanAttributedRows(data: Uint8Array, into: TouchedByAccount): string | undefined {
  let prevStart = -1;
  let prevLength = 0;
  let touched: TouchedHours | undefined;
  return scan(asBuffer(data), {
    check(buf, pos) {
      const end = buf.indexOf(TAB, pos);
      return end <= pos ? 'names no account' : end;
    },
    touched(buf, pos, end) {
      const length = end + 1 - pos; // the account and its tab
      if (touched && length === prevLength && sameBytes(buf, pos, prevStart, length)) return touched;
      const accountId = buf.toString('latin1', pos, end);
      touched = into.get(accountId);
      if (!touched) into.set(accountId, (touched = new Map()));
      prevStart = pos;
      prevLength = length;
      return touched;
    },
  });
}

/** How a scan reads a row's account column at `pos`. */
interface AccountColumn {
  /** The position of the tab ending it, or what is wrong with it. */
  check(buf: Buffer, pos: number): number | string;
  /** Where the (meter, second) counts of the row's account go. */
  touched(buf: Buffer, pos: number, end: number): TouchedHours;
}

/** The row loop of both scans: the account column as `accounts` says; the meter and the timestamp's second here. */
function scan(buf: Buffer, accounts: AccountColumn): string | undefined {
  let prevMeterStart = -1;
  let prevMeterLen = 0;
  let meterId: string | undefined;
  let prevTouched: TouchedHours | undefined;
  let meterHours: Map<number, number> | undefined;
  // A run of rows of one (meter, second) — live traffic is one long run — adds to a local count, flushed on change.
  let runSeconds: Map<number, number> | undefined;
  let runSecond = 0;
  let runRows = 0;
  const flush = () => {
    if (runSeconds && runRows) runSeconds.set(runSecond, (runSeconds.get(runSecond) ?? 0) + runRows);
    runRows = 0;
  };
  let row = 0;
  for (let pos = 0; pos < buf.length; row++) {
    const accountEnd = accounts.check(buf, pos);
    if (typeof accountEnd === 'string') return `row ${row} ${accountEnd}`;
    const meterStart = accountEnd + 1;
    const meterEnd = buf.indexOf(TAB, meterStart);
    if (meterEnd < 0) return `row ${row} has no timestamp`;
    let i = meterEnd + 1;
    const negative = buf[i] === MINUS;
    if (negative) i++;
    let ts = 0;
    const digitsFrom = i;
    for (let c = buf[i]!; c >= 0x30 && c <= 0x39; c = buf[++i]!) ts = ts * 10 + (c - 0x30);
    if (i === digitsFrom || buf[i] !== TAB) return `row ${row} has a malformed timestamp`;
    const second = Math.floor((negative ? -ts : ts) / SECOND_MS);
    const touched = accounts.touched(buf, pos, accountEnd);
    // One string per run of rows of a meter, whoever's they are: an operator's rows change account every row.
    const meterLen = meterEnd - meterStart;
    if (meterId === undefined || meterLen !== prevMeterLen || !sameBytes(buf, meterStart, prevMeterStart, meterLen)) {
      meterId = buf.toString('latin1', meterStart, meterEnd);
      prevMeterStart = meterStart;
      prevMeterLen = meterLen;
      meterHours = undefined;
    }
    if (!meterHours || touched !== prevTouched) {
      meterHours = touched.get(meterId);
      if (!meterHours) touched.set(meterId, (meterHours = new Map()));
      prevTouched = touched;
    }
    if (meterHours !== runSeconds || second !== runSecond) {
      flush();
      runSeconds = meterHours;
      runSecond = second;
    }
    runRows++;
    const end = buf.indexOf(NL, i);
    if (end < 0) return `row ${row} is not newline-terminated`;
    pos = end + 1;
  }
  flush();
  return undefined;
}

/**
 * The rows of an attributed message split by the shard that owns each row's account (a ClickHouse cluster:
 * shared/clients/usage-shards.ts), in their order. One shard → the payload itself.
 */
export function rowsByShard(data: Uint8Array, shardOf: (accountId: string) => number): Map<number, Buffer> {
  const buf = asBuffer(data);
  const parts = new Map<number, Buffer[]>();
  const shards = new Map<string, number>();
  for (let pos = 0; pos < buf.length; ) {
    const accountEnd = buf.indexOf(TAB, pos);
    const end = buf.indexOf(NL, pos);
    const accountId = buf.toString('latin1', pos, accountEnd);
    let shard = shards.get(accountId);
    if (shard === undefined) shards.set(accountId, (shard = shardOf(accountId)));
    const list = parts.get(shard);
    const rowBytes = buf.subarray(pos, end + 1);
    if (list) list.push(rowBytes);
    else parts.set(shard, [rowBytes]);
    pos = end + 1;
  }
  if (parts.size === 1) return new Map([[parts.keys().next().value!, buf]]);
  return new Map([...parts].map(([s, list]) => [s, Buffer.concat(list)]));
}
