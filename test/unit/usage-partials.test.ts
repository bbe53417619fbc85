import t from 'tap';
import {
  oldestPartialDay,
  parseUnits,
  partialLines,
  PARTIAL_COLUMNS,
  unitsText,
} from '../../services/domain/usage/partials.js';
import { tsvEscape } from '../../shared/usage/wire.js';
import { tsvArray } from '../../shared/usage/dimensions.js';
import { forAll, type Seeded } from './seeded.js';

/**
 * The consumer's partial sums of a hot meter's pending seconds (services/domain/usage/partials.ts) replace a scan
 * of the raw rows in reads: they must equal, per (message, account, meter, second, dimension set), what the rule
 * written plainly here computes with BigInt decimals — count, sum, min, max and the latest record by (timestamp,
 * id) — over the rows the message stores first, in the open hour only. A wrong partial is a wrong bill.
 */
const OPEN_FROM = 1_764_478_800; // an hour's first second
const SCALE = 1_000_000_000n;

interface Row {
  account: string;
  meter: string;
  ts: number;
  id: string;
  value: string;
  dims: [string[], string[]];
}

const DIMS: [string[], string[]][] = [
  [[], []],
  [['region'], ['eu']],
  [['region'], ['us']],
  [
    ['region', 'tier'],
    ['eu', "it's"],
  ],
  [['path'], ['a\\b\tc']],
];
const IDS = ['a', 'b', 'b\\', 'tab\there', 'z', 'é', 'use_xxxxxxxxxxxxxxxxxxxxx1', 'Z'];

/** A value as decimalText writes it (shared/usage/value.ts): at most 9 decimals, no exponent, up to 1e18. */
function valueText(g: Seeded): string {
  const sign = g.bool(0.2) ? '-' : '';
  const v = g.pick([
    () => g.decimal(3, 9),
    () => g.decimal(6, 2),
    () => g.decimal(7, 9), // past the double fast path
    () => String(g.int(1, 9)) + '0'.repeat(g.int(10, 17)), // up to 1e18
    () => '0',
  ])();
  return v === '0' ? v : sign + v;
}

function rowOf(g: Seeded): Row {
  return {
    account: g.pick(['acct_1', 'acct_12']),
    meter: g.pick(['mtr_a', 'mtr_ab']),
    ts: (OPEN_FROM + g.int(-2, 3)) * 1000 + g.int(0, 999),
    id: g.bool(0.5) ? g.pick(IDS) : `id-${g.int(0, 99)}`,
    value: valueText(g),
    dims: g.pick(DIMS),
  };
}

/** The dimension columns as the row carries them (TabSeparated text of two arrays). */
const dimsText = (r: Row) => `${tsvEscape(tsvArray(r.dims[0]))}\t${tsvEscape(tsvArray(r.dims[1]))}`;
const line = (r: Row) =>
  `${r.account}\t${r.meter}\t${r.ts}\t${tsvEscape(r.id)}\t${r.value}\t${r.ts + 5}\t${dimsText(r)}\n`;

/** A decimal's text as units of 10^-9, with BigInt. */
function units(text: string): bigint {
  const neg = text.startsWith('-');
  const [int, frac = ''] = (neg ? text.slice(1) : text).split('.');
  const u = BigInt(int!) * SCALE + BigInt(frac.padEnd(9, '0'));
  return neg ? -u : u;
}

const tsvUnescape = (s: string) => s.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c);

/** The rule, plainly: one partial per (message, account, meter, second, dimensions) of the fresh open-hour rows. */
function reference(chunks: Row[][], fresh: boolean[], keys: number[]): Map<string, Record<string, string>> {
  const out = new Map<string, { rows: Row[]; key: number }>();
  let i = 0;
  chunks.forEach((rows, c) => {
    for (const r of rows) {
      if (!fresh[i++] || Math.floor(r.ts / 1000) < OPEN_FROM) continue;
      const k = `${keys[c]}|${r.account}|${r.meter}|${Math.floor(r.ts / 1000)}|${dimsText(r)}`;
      let e = out.get(k);
      if (!e) out.set(k, (e = { rows: [], key: keys[c]! }));
      e.rows.push(r);
    }
  });
  const want = new Map<string, Record<string, string>>();
  for (const [k, { rows }] of out) {
    const us = rows.map((r) => units(r.value));
    const cmp = (a: Row, b: Row) =>
      a.ts !== b.ts ? a.ts - b.ts : Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
    const last = rows.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
    want.set(k, {
      records: String(rows.length),
      sum: String(us.reduce((a, b) => a + b, 0n)),
      min: String(us.reduce((a, b) => (b < a ? b : a))),
      max: String(us.reduce((a, b) => (b > a ? b : a))),
      last_ts: String(last.ts),
      last_id: last.id,
      last_value: String(units(last.value)),
    });
  }
  return want;
}

/** partialLines' output read back the way ClickHouse would (TabSeparated fields, Decimal text as units). */
function parsed(out: Buffer): Map<string, Record<string, string>> {
  const got = new Map<string, Record<string, string>>();
  for (const text of out.toString('utf8').split('\n').filter(Boolean)) {
    const f = Object.fromEntries(text.split('\t').map((v, n) => [PARTIAL_COLUMNS[n]!, v]));
    const k = `${f.batch}|${f.account_id}|${f.meter_id}|${f.second}|${f.dim_keys}\t${f.dim_values}`;
    if (got.has(k)) got.set(k, { duplicate: 'yes' });
    else
      got.set(k, {
        records: f.records!,
        sum: String(units(f.sum!)),
        min: String(units(f.min!)),
        max: String(units(f.max!)),
        last_ts: f.last_ts!,
        last_id: tsvUnescape(f.last_id!),
        last_value: String(units(f.last_value!)),
      });
  }
  return got;
}

t.test('partials equal the plain rule over the fresh rows of the open hour, per message', async (t) => {
  const failures = forAll(
    0x4550,
    300,
    (g) => {
      const chunks = Array.from({ length: g.int(1, 4) }, () => Array.from({ length: g.int(1, 40) }, () => rowOf(g)));
      const all = chunks.flat();
      return {
        chunks,
        keys: chunks.map(() => g.int(1, 1e9)),
        fresh: g.bool(0.3) ? undefined : all.map(() => g.bool(0.8)),
      };
    },
    ({ chunks, keys, fresh }) => {
      const bytes = chunks.map((rows) => Buffer.from(rows.map(line).join('')));
      const flags = fresh && Uint8Array.from(fresh.map(Number));
      const out = partialLines({ chunks: bytes, keys, fresh: flags, openFromSecond: OPEN_FROM });
      if (!out) return 'unreadable';
      const want = reference(chunks, fresh ?? chunks.flat().map(() => true), keys);
      const got = parsed(out);
      if (got.size !== want.size) return `${got.size} partials, want ${want.size}`;
      for (const [k, v] of want)
        if (JSON.stringify(got.get(k)) !== JSON.stringify(v))
          return `${k}: ${JSON.stringify(got.get(k))} want ${JSON.stringify(v)}`;
      return null;
    },
  );
  t.same(failures, []);
});

t.test('values: decimalText digits read exactly, and written back as Decimal(38, 9) text', async (t) => {
  const failures = forAll(
    0x4551,
    2000,
    (g) => valueText(g),
    (v) => {
      const u = parseUnits(Buffer.from(v), 0, v.length);
      if (u === undefined) return 'unreadable';
      if (BigInt(u) !== units(v)) return `read ${u}`;
      if (units(unitsText(u)) !== units(v)) return `written ${unitsText(u)}`;
      return null;
    },
  );
  t.same(failures, []);
  for (const bad of ['', '-', '1.', '.5', '1e5', '1.0000000001', 'abc'])
    t.equal(parseUnits(Buffer.from(bad), 0, bad.length), undefined, `"${bad}" is not read as a value`);
  t.equal(unitsText(-0), '0.000000000', '-0 is 0');
});

t.test('a row it cannot read writes no partials at all (the insert marks its seconds as without them)', async (t) => {
  const ok = `acct_1\tmtr_a\t${OPEN_FROM * 1000}\tid-1\t2.5\t${OPEN_FROM * 1000}\t[]\t[]\n`;
  t.ok(partialLines({ chunks: [Buffer.from(ok)], keys: [1], openFromSecond: 0 })?.length, 'a good row has a partial');
  const badValue = ok.replace(/\t(-?[0-9.]+)\t/, '\t1e5\t');
  t.equal(partialLines({ chunks: [Buffer.from(ok + badValue)], keys: [1], openFromSecond: 0 }), undefined);
  t.equal(partialLines({ chunks: [Buffer.from('acct\tmtr\t1\n')], keys: [1], openFromSecond: 0 }), undefined);
});

t.test('partials are kept for today and yesterday (UTC), older days dropped', async (t) => {
  t.equal(oldestPartialDay(Date.UTC(2026, 10, 30, 0, 5)), 20261129);
  t.equal(oldestPartialDay(Date.UTC(2027, 0, 1, 23, 59)), 20261231);
});
