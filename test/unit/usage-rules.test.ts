import t from 'tap';
import { decimalText, valueProblem } from '../../shared/usage/value.js';
import { canonicalTimestamp, parseTimestamp } from '../../shared/usage/timestamp.js';
import { newUsageId } from '../../shared/usage/ids.js';
import { encodeRow, RowWriter, tsvEscape } from '../../shared/usage/wire.js';
import { NO_DIMENSIONS } from '../../shared/usage/dimensions.js';
import { bodyValidator } from '../../shared/http/validation.js';
import { plainRecordShape, writeRecord } from '../../services/ingress/records.js';
import { MeterUsageRecordBody, UsageRecordBody } from '../../shared/api/usage-records.js';

t.test('decimalText: exact stored text, at most 9 decimals', async (t) => {
  const ok: [number, string][] = [
    [0, '0'],
    [-0, '0'],
    [1, '1'],
    [0.1, '0.1'],
    [-2.5, '-2.5'],
    [0.123456789, '0.123456789'],
    [1e-7, '0.0000001'],
    [1.5e-7, '0.00000015'],
    [1e-9, '0.000000001'],
    [1e18, '1000000000000000000'],
    [123456.000001, '123456.000001'],
  ];
  for (const [v, text] of ok) t.equal(decimalText(v), text, `${v} → ${text}`);
  for (const v of [0.1234567891, 1e-10, 1.5e-10, 3.14159265358979])
    t.equal(decimalText(v), undefined, `${v} has more than 9 decimals`);
});

t.test('valueProblem: finite, counters ≥ 0, magnitude', async (t) => {
  t.equal(valueProblem(Infinity, false), 'must be a finite number');
  t.equal(valueProblem(NaN, false), 'must be a finite number');
  t.match(valueProblem(-1, true), /greater than or equal to 0/);
  t.equal(valueProblem(-1, false), undefined, 'gauges and histograms may be negative');
  t.equal(valueProblem(0, true), undefined);
  t.match(valueProblem(1.5e18, false), /between/);
  t.match(valueProblem(-1.5e18, false), /between/);
  t.equal(valueProblem(Number.MAX_SAFE_INTEGER, true), undefined, 'the largest integer a JSON number carries exactly');
  t.match(valueProblem(1e18, true), /at most 9007199254740991/, 'an integer above 2^53 may not be the one written');
  t.match(valueProblem(123456789012345678, true), /at most 9007199254740991/, 'arrives as …680: refused, not rounded');
  t.equal(valueProblem(12345678901.2345, true), undefined, '15 significant digits');
  t.match(valueProblem(1234567890.1234567, true), /significant digits/, '17 significant digits');
  t.equal(valueProblem(0.000000123, true), undefined);
});

t.test('parseTimestamp: RFC 3339 with an offset, to UTC ms', async (t) => {
  const base = Date.UTC(2026, 10, 21, 10, 0, 0);
  t.equal(parseTimestamp('2026-11-21T10:00:00Z'), base);
  t.equal(parseTimestamp('2026-11-21t10:00:00z'), base, 'lower-case t and z');
  t.equal(parseTimestamp('2026-11-21T10:00:00.5Z'), base + 500);
  t.equal(parseTimestamp('2026-11-21T10:00:00.123456789Z'), base + 123, 'sub-millisecond digits dropped');
  t.equal(parseTimestamp('2026-11-21T12:30:00+02:30'), base);
  t.equal(parseTimestamp('2026-11-21T05:00:00-05:00'), base);
  t.equal(parseTimestamp('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29), 'leap day');
  t.equal(parseTimestamp('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29), 'leap day of a year divisible by 400');
  // Computed without Date.UTC: the same epoch ms as Date.parse for every day of several (leap) years.
  for (const year of [1970, 1999, 2000, 2024, 2026, 2100, 2400, 9999]) {
    for (let day = Date.UTC(year, 0, 1); day < Date.UTC(year + 1, 0, 1); day += 86_400_000 + 3_723_004) {
      const text = new Date(day).toISOString();
      if (parseTimestamp(text) !== day) t.fail(`${text} → ${parseTimestamp(text)}`);
    }
  }
  t.equal(parseTimestamp('2026-11-21T10:00:00.05Z'), base + 50);
  t.equal(parseTimestamp('2026-11-21T10:00:00.007+00:00'), base + 7);
  // Same answer as Date.parse wherever both accept the input.
  for (const s of [
    '2026-01-31T23:59:59.999Z',
    '2026-06-15T00:00:00.1-11:30',
    '1970-01-01T00:00:00Z',
    '2099-12-31T12:34:56.789+14:00',
  ]) {
    t.equal(parseTimestamp(s), Date.parse(s), s);
  }
  for (const bad of [
    '2026-11-21T10:00:00', // no offset
    '2026-11-21 10:00:00Z',
    '2026-11-21',
    '2026-02-29T00:00:00Z', // not a leap year
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:60Z',
    '2026-11-21T10:00:00+24:00',
    '2026-11-21T10:00:00.Z',
    '2026-11-21T10:00:00.1234567891Z', // 10 fraction digits
    '2100-02-29T00:00:00Z', // 2100 is not a leap year
    '2026-11-21T10:00:00+0200',
    '2026-11-21T10:00:00+02:00 ',
    '2026-11-21T10:00:00Zjunk',
    '2026-1a-21T10:00:00Z',
    '2026-11-21T1-:00:00Z',
    '1969-12-31T23:59:59Z',
    '+02026-11-21T10:00:00Z',
    'Sat, 21 Nov 2026 10:00:00 GMT',
    '',
  ]) {
    t.equal(parseTimestamp(bad), undefined, `rejects ${JSON.stringify(bad)}`);
  }
});

t.test('canonicalTimestamp: the UTC form with milliseconds', async (t) => {
  for (const s of [
    '2026-11-21T10:00:00Z',
    '2026-11-21T12:00:00.5+02:00',
    '2026-11-21t10:00:00.000z',
    '2026-11-21T10:00:00.000123Z',
    '2026-11-21T10:00:00.000Z',
  ]) {
    t.equal(
      canonicalTimestamp(s, parseTimestamp(s)!),
      '2026-11-21T10:00:00' + (s.includes('.5') ? '.500Z' : '.000Z'),
      s,
    );
  }
});

t.test('server-assigned ids have the use_ shape and do not repeat', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) seen.add(newUsageId());
  t.equal(seen.size, 20_000);
  for (const id of [...seen].slice(0, 100)) t.match(id, /^use_[0-9A-Za-z]{22}$/);
});

t.test('TSV rows escape what ClickHouse would misread', async (t) => {
  t.equal(tsvEscape('plain-id_1'), 'plain-id_1');
  t.equal(tsvEscape('a\tb\nc\\d\re'), 'a\\tb\\nc\\\\d\\re');
  t.equal(
    encodeRow('acct_1', 'mtr_1', 1700000000000, tsvEscape('x\ty'), '0.1', 1700000000001).toString(),
    'acct_1\tmtr_1\t1700000000000\tx\\ty\t0.1\t1700000000001\t[]\t[]\n',
  );
  const dims = { keys: ['model', 'region'], values: ["o'1\tx\\", 'eu'] };
  t.equal(
    encodeRow('acct_1', 'mtr_1', 1, 'r', '1', 2, dims).toString(),
    "acct_1\tmtr_1\t1\tr\t1\t2\t['model','region']\t['o\\'1\\tx\\\\','eu']\n",
    'dimension values escaped inside the array literal',
  );
  // Caller-chosen ids and dimension values may be any Unicode: written as UTF-8, rows of a writer back to back.
  const w = new RowWriter();
  w.row('acct_1', 'mtr_1', 1, 'ré-1', '1', 2, { keys: ['k'], values: ['日本'] });
  w.row('acct_1', 'mtr_1', 1700000000000, 'use_x', '-0.000000001', 2, NO_DIMENSIONS);
  t.equal(
    w.bytes().toString('utf8'),
    "acct_1\tmtr_1\t1\tré-1\t1\t2\t['k']\t['日本']\nacct_1\tmtr_1\t1700000000000\tuse_x\t-0.000000001\t2\t[]\t[]\n",
  );
  t.equal(w.rows, 2);
  // A writer grows past its first estimate without losing what it holds.
  const many = new RowWriter(1);
  const one: Buffer[] = [];
  for (let i = 0; i < 500; i++) {
    many.row('acct_1', 'mtr_1', 1700000000000 + i, `id-${i}-${'ü'.repeat(i % 7)}`, String(i), 3);
    one.push(encodeRow('acct_1', 'mtr_1', 1700000000000 + i, `id-${i}-${'ü'.repeat(i % 7)}`, String(i), 3));
  }
  t.same(many.bytes(), Buffer.concat(one));
});

t.test(
  'RowWriter: rows that repeat parts of the previous one (copied, not re-encoded) equal rows written alone',
  async (t) => {
    const dims = { keys: ['model'], values: ['gpt-x'] };
    // [account, meter, ts, id, value, received, dims]: runs of the same account/meter, timestamp and received
    // time, broken by a change of each, by dimensions, by negative and 8-digit-boundary integers and Unicode.
    const table: [string, string, number, string, string, number, typeof dims | undefined][] = [
      ['acct_1', 'mtr_1', 1700000000000, 'a', '1', 1700000000500, undefined],
      ['acct_1', 'mtr_1', 1700000000000, 'b', '2', 1700000000500, undefined],
      ['acct_1', 'mtr_1', 1700000000000, 'c', '3', 1700000000500, dims],
      ['acct_1', 'mtr_1', 1700000000000, 'd', '4', 1700000000500, undefined],
      ['acct_1', 'mtr_2', 1700000000000, 'e', '5', 1700000000500, undefined],
      ['acct_1', 'mtr_2', 1700000000001, 'f', '6', 1700000000500, undefined],
      ['acct_2', 'mtr_2', 1700000000001, 'g', '7', 1700000000501, undefined],
      ['acct_2', 'mtr_2', 99999999, 'h', '-0.5', 100000000, undefined],
      ['acct_2', 'mtr_2', 100000000, 'h', '0', 100000001, undefined],
      ['acct_2', 'mtr_2', 0, 'ü-日本', '1', -1, undefined],
      ['acct_2', 'mtr_2', -12345678901, 'i', '1', -1, undefined],
      ['acct_2', 'mtr_2', Number.MAX_SAFE_INTEGER, 'j', '1', -1, dims],
      ['acct_2', 'mtr_2', Number.MAX_SAFE_INTEGER, 'k', '1', -1, dims],
      // An operator's batch: a new account per row on one meter (the meter's bytes copied), then a new meter.
      ['acct_3', 'mtr_2', 1700000000000, 'l', '1', 1700000000500, undefined],
      ['acct_4', 'mtr_2', 1700000000000, 'm', '1', 1700000000500, undefined],
      ['acct_3', 'mtr_2', 1700000000000, 'n', '1', 1700000000500, dims],
      ['acct_3', 'mtr_2', 1700000000000, 'o', '1', 1700000000500, undefined],
      ['acct_5', 'mtr_2', 1700000000000, 'p', '1', 1700000000500, undefined],
      ['acct_5', 'mtr_3', 1700000000000, 'q', '1', 1700000000500, undefined],
      ['acct_6', 'mtr_3', 1700000000000, 'r', '1', 1700000000500, undefined],
      ['acct_ü', 'mtr_3', 1700000000000, 's', '1', 1700000000500, undefined],
      ['acct_7', 'mtr_3', 1700000000000, 't', '1', 1700000000500, undefined],
    ];
    const w = new RowWriter(1);
    for (let round = 0; round < 40; round++)
      for (const [a, m, ts, id, v, rcv, d] of table) w.row(a, m, ts, id, v, rcv, d);
    const alone = table
      .map(([a, m, ts, id, v, rcv, d]) => encodeRow(a, m, ts, id, v, rcv, d).toString('utf8'))
      .join('');
    t.equal(w.bytes().toString('utf8'), alone.repeat(40));
    t.match(alone, /\t1700000000000\ta\t1\t1700000000500\t\[\]\t\[\]\n/);
    t.match(alone, /\t-12345678901\ti\t1\t-1\t/);
    t.match(alone, /\t9007199254740991\tj\t/);
    t.match(alone, /\t99999999\th\t-0\.5\t100000000\t/);
  },
);

t.test('plainRecordShape (the batch fast path) accepts a record only where the compiled schema does', async (t) => {
  const schemaFor = (withMeterId: boolean) => bodyValidator(withMeterId ? MeterUsageRecordBody : UsageRecordBody).check;
  const ts = '2026-11-21T10:00:00Z';
  const long = (n: number) => 'x'.repeat(n);
  const records: unknown[] = [
    { value: 1, timestamp: ts },
    { value: 1.5, timestamp: ts, id: 'r-1' },
    { meter_id: 'mtr_1', value: 1, timestamp: ts },
    { meter_id: 'mtr_1', value: -2, timestamp: 'not a time', id: 'é' },
    { value: 1, timestamp: ts, id: long(128) },
    { value: 1, timestamp: ts, id: long(129) },
    { value: 1, timestamp: ts, id: '😀'.repeat(64) }, // 128 UTF-16 units, 64 code points
    { value: 1, timestamp: ts, id: '😀'.repeat(65) }, // 130 units, 65 code points: the schema allows it
    { value: 1, timestamp: ts, id: '' },
    { value: 1, timestamp: ts, id: 7 },
    { value: 1, timestamp: ts, id: null },
    { value: '1', timestamp: ts },
    { value: 1, timestamp: 1700000000000 },
    { value: 1 },
    { timestamp: ts },
    { value: 1, timestamp: ts, extra: true },
    { value: 1, timestamp: ts, dimensions: { model: 'x' } },
    { value: 1, timestamp: ts, dimensions: {} },
    { value: 1, timestamp: ts, meter_id: 'mtr_1' },
    { meter_id: '', value: 1, timestamp: ts },
    { meter_id: long(64), value: 1, timestamp: ts },
    { meter_id: long(65), value: 1, timestamp: ts },
    { meter_id: 5, value: 1, timestamp: ts },
    JSON.parse('{"value":1,"timestamp":"2026-11-21T10:00:00Z","__proto__":{"id":"x"}}'),
    JSON.parse('{"value":1,"timestamp":"2026-11-21T10:00:00Z","value":2}'),
    Object.assign(Object.create({ inherited: 1 }), { value: 1, timestamp: ts }),
    [1, 2],
    null,
    'record',
    42,
  ];
  for (const withMeterId of [false, true]) {
    const schema = schemaFor(withMeterId);
    let fast = 0;
    for (const r of records) {
      if (!plainRecordShape(r, withMeterId)) continue;
      fast++;
      t.ok(schema(r), `fast path only for what the schema accepts: ${JSON.stringify(r)} (meter_id: ${withMeterId})`);
    }
    t.ok(fast >= 3, 'the usual shapes take the fast path');
  }
  // The fast path and the schema give one answer per record, through the whole record rules.
  const meter = {
    id: 'mtr_1',
    account_id: 'acct_1',
    type: 'counter',
    aggregation: 'sum',
    status: 'active',
    updated_at_ms: 0,
  } as const;
  for (const r of records) {
    const errors: { field: string; message: string }[] = [];
    const w = new RowWriter();
    const id = writeRecord(w, r, meter, { accountId: 'acct_1', now: Date.parse(ts) }, errors, false);
    const schema = schemaFor(false);
    t.equal(id !== undefined, schema(r) && errors.length === 0, `one outcome for ${JSON.stringify(r)}`);
  }
});
