import t, { type Test } from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import {
  createMeter,
  iso,
  postJson,
  startConsumer,
  startUsageApi,
  storedCount,
  waitForMeter,
  type TestMeter,
  type UsageApi,
} from './ingest-helpers.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const day = (ms: number) => iso(ms).slice(0, 10);

interface Rec {
  id: string;
  ts: number;
  /** Value in thousandths: exact integer maths for the expectation. */
  milli: number;
}

const milliText = (m: number) => {
  const sign = m < 0 ? '-' : '';
  const a = Math.abs(m);
  const frac = String(a % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '');
  return sign + String(Math.floor(a / 1000)) + (frac ? '.' + frac : '');
};

/** Posts records as batches of up to 1,000 with a few requests in flight; every one must be accepted. */
async function ingest(
  t: Test,
  api: UsageApi,
  auth: string,
  meter: TestMeter,
  recs: { id?: string; ts: number; value: number }[],
): Promise<void> {
  const batches: unknown[][] = [];
  for (let i = 0; i < recs.length; i += 1000)
    batches.push(
      recs.slice(i, i + 1000).map((r) => ({ value: r.value, timestamp: iso(r.ts), ...(r.id ? { id: r.id } : {}) })),
    );
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches.length) {
        const b = batches[next++]!;
        const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, auth, b);
        if (res.status !== 202 || res.body.rejected !== 0)
          throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        accepted += res.body.accepted;
      }
    }),
  );
  t.equal(accepted, recs.length, `${recs.length} records accepted`);
}

async function getUsage(
  api: UsageApi,
  auth: string,
  meterId: string,
  query: string,
): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${api.url}/v1/meters/${meterId}/usage?${query}`, { headers: { authorization: auth } });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text };
}

/** Exact p-quantile by nearest rank, for the tolerance check. */
function rankQuantile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i]!;
}

t.test('usage queries', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const R = acct.auth.read.authorization;
  const now = Date.now();
  const today = day(now);
  // Several days of data ending a minute ago; the query range starts 8 days back so the first days are empty.
  const from = now - 6 * DAY;
  const startDate = day(now - 8 * DAY);

  t.test('100k records over 6 days with retried ids: every window exact', async (t) => {
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum', unit: 'GB' });
    await waitForMeter(api, meter, W);
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const recs: Rec[] = [];
    for (let i = 0; i < 100_000; i++)
      recs.push({
        id: `r-${i}`,
        ts: Math.floor(from + rand() * (now - 60_000 - from)),
        milli: Math.floor(rand() * 100_000),
      });
    // 15% re-sent: same id, meter and timestamp, interleaved with the originals in other requests.
    const retries = recs.filter(() => rand() < 0.15);
    const sendOrder = [...recs, ...retries].map((r) => ({ id: r.id, ts: r.ts, value: r.milli / 1000 }));
    for (let i = sendOrder.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [sendOrder[i], sendOrder[j]] = [sendOrder[j]!, sendOrder[i]!];
    }
    t.ok(retries.length > 10_000, `${retries.length} retried records`);
    await ingest(t, api, W, meter, sendOrder);
    await waitUntil(
      async () => (await storedCount(infra, meter.id)) === recs.length,
      '100k distinct records in ClickHouse',
      60_000,
      200,
    );

    const expect = (keyOf: (ts: number) => string) => {
      const m = new Map<string, { milli: number; count: number }>();
      for (const r of recs) {
        const k = keyOf(r.ts);
        const e = m.get(k) ?? { milli: 0, count: 0 };
        e.milli += r.milli;
        e.count++;
        m.set(k, e);
      }
      return m;
    };
    const total = recs.reduce((s, r) => s + r.milli, 0);
    for (const [window, keyOf, expectedWindows] of [
      ['day', (ts: number) => day(ts), 9],
      ['hour', (ts: number) => iso(Math.floor(ts / HOUR) * HOUR), 9 * 24],
      ['month', (ts: number) => iso(ts).slice(0, 7), undefined],
      ['none', () => 'all', 1],
    ] as const) {
      const res = await getUsage(api, R, meter.id, `start_date=${startDate}&end_date=${today}&window=${window}`);
      t.equal(res.status, 200, `${window}: 200`);
      t.match(res.body, {
        meter_id: meter.id,
        type: 'counter',
        aggregation: 'sum',
        unit: 'GB',
        start_date: startDate,
        end_date: today,
        window,
        count: recs.length,
      });
      t.equal(res.body.value, Number(milliText(total)), `${window}: total ${milliText(total)}`);
      if (expectedWindows) t.equal(res.body.data.length, expectedWindows, `${window}: every window present`);
      const exp = expect(keyOf);
      let mismatches = 0;
      let empty = 0;
      for (const w of res.body.data) {
        const k =
          window === 'day'
            ? w.start.slice(0, 10)
            : window === 'hour'
              ? w.start
              : window === 'month'
                ? w.start.slice(0, 7)
                : 'all';
        const e = exp.get(k) ?? { milli: 0, count: 0 };
        if (e.count === 0) empty++;
        if (w.count !== e.count || w.value !== Number(milliText(e.milli))) mismatches++;
      }
      t.equal(mismatches, 0, `${window}: every window's sum and count equal the local expectation`);
      if (window === 'day') {
        t.ok(empty >= 2, `${empty} empty days are present with value 0, count 0`);
        t.same(res.body.data[0], {
          start: `${startDate}T00:00:00.000Z`,
          end: `${day(now - 7 * DAY)}T00:00:00.000Z`,
          value: 0,
          count: 0,
        });
      }
      t.equal(
        res.body.data.reduce((s: number, w: any) => s + w.count, 0),
        recs.length,
        `${window}: windows add up`,
      );
    }
    const defaults = await getUsage(api, R, meter.id, '');
    t.equal(defaults.status, 200);
    t.match(
      defaults.body,
      { start_date: `${today.slice(0, 7)}-01`, end_date: today, window: 'day' },
      'default range: this month to today, by day',
    );
  });

  t.test('exact decimals: 0.1 + 0.2 = 0.3', async (t) => {
    const meter = await createMeter(infra, acct.accountId);
    await waitForMeter(api, meter, W);
    await ingest(t, api, W, meter, [
      { ts: now - 120_000, value: 0.1 },
      { ts: now - 60_000, value: 0.2 },
    ]);
    await waitUntil(async () => (await storedCount(infra, meter.id)) === 2, 'both stored');
    const res = await getUsage(api, R, meter.id, `window=none&start_date=${day(now - DAY)}&end_date=${today}`);
    t.match(res.text, /"value":0\.3,"count":2/, 'the JSON says 0.3, not 0.30000000000000004');
  });

  t.test('counter count; gauge last, max, min, avg', async (t) => {
    const recs: { id: string; ts: number; value: number }[] = [];
    for (let i = 0; i < 400; i++)
      recs.push({ id: `g-${i}`, ts: now - 2 * DAY + i * 7 * 60_000, value: ((i * 37) % 101) - 50 + (i % 3) / 4 });
    // Arrives last but is the oldest: not the gauge's last value.
    recs.push({ id: 'late', ts: now - 2 * DAY - 1000, value: 999 });
    const byDay = new Map<string, typeof recs>();
    for (const r of recs) byDay.set(day(r.ts), [...(byDay.get(day(r.ts)) ?? []), r]);
    const expected = (agg: string, rs: typeof recs): number => {
      const values = rs.map((r) => r.value);
      switch (agg) {
        case 'last':
          return rs.reduce((a, b) => (b.ts > a.ts ? b : a)).value;
        case 'max':
          return Math.max(...values);
        case 'min':
          return Math.min(...values);
        case 'avg': // values are quarters: the sum is exact in binary, the mean rounds at 9 places
          return Number((values.reduce((a, b) => a + b, 0) / values.length).toFixed(9));
        default:
          return rs.length;
      }
    };
    const meters: [string, string][] = [
      ['counter', 'count'],
      ['gauge', 'last'],
      ['gauge', 'max'],
      ['gauge', 'min'],
      ['gauge', 'avg'],
    ];
    for (const [type, aggregation] of meters) {
      const meter = await createMeter(infra, acct.accountId, { type: type as 'gauge', aggregation });
      await waitForMeter(api, meter, W);
      const sent = type === 'counter' ? recs.map((r) => ({ ...r, value: Math.abs(r.value) })) : recs;
      await ingest(t, api, W, meter, sent);
      await waitUntil(
        async () => (await storedCount(infra, meter.id)) === recs.length,
        `${type} ${aggregation} stored`,
      );
      const res = await getUsage(api, R, meter.id, `start_date=${day(now - 4 * DAY)}&end_date=${today}&window=day`);
      t.equal(res.status, 200);
      t.equal(res.body.value, expected(aggregation, sent), `${type} ${aggregation}: whole range`);
      t.equal(res.body.count, recs.length);
      for (const w of res.body.data) {
        const rs = (byDay.get(w.start.slice(0, 10)) ?? []).map((r) => sent.find((s) => s.id === r.id)!);
        const want = rs.length === 0 ? (aggregation === 'count' ? 0 : null) : expected(aggregation, rs);
        t.equal(w.value, want, `${type} ${aggregation} on ${w.start.slice(0, 10)}: ${want}`);
        t.equal(w.count, rs.length);
      }
    }
  });

  t.test('histograms: exact sum/count/min/max/avg, percentiles within the documented tolerance', async (t) => {
    // Latency-like: many small values, a long tail.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const recs = Array.from({ length: 20_000 }, (_, i) => ({
      id: `h-${i}`,
      ts: now - DAY + Math.floor(rand() * (DAY - 120_000)),
      value: Math.round(Math.exp(rand() * 8) * 100) / 100,
    }));
    const meter = await createMeter(infra, acct.accountId, { type: 'histogram', aggregation: 'p99', unit: 'ms' });
    await waitForMeter(api, meter, W);
    await ingest(t, api, W, meter, recs);
    await waitUntil(async () => (await storedCount(infra, meter.id)) === recs.length, 'histogram stored', 30_000);
    const res = await getUsage(api, R, meter.id, `start_date=${day(now - 2 * DAY)}&end_date=${today}&window=none`);
    t.equal(res.status, 200);
    const sorted = recs.map((r) => r.value).sort((a, b) => a - b);
    const cents = recs.reduce((s, r) => s + Math.round(r.value * 100), 0);
    t.equal(res.body.count, recs.length);
    t.equal(res.body.min, sorted[0]);
    t.equal(res.body.max, sorted[sorted.length - 1]);
    t.equal(res.body.avg, Number((cents / 100 / recs.length).toFixed(9)));
    t.equal(res.body.value, res.body.p99, 'the p99 meter’s value is its p99');
    // Documented tolerance: the estimate of the p-quantile lies between the exact (p − 1%) and (p + 1%) quantiles.
    for (const [name, p] of [
      ['p50', 0.5],
      ['p90', 0.9],
      ['p95', 0.95],
      ['p99', 0.99],
    ] as const) {
      const lo = rankQuantile(sorted, p - 0.01);
      const hi = rankQuantile(sorted, Math.min(1, p + 0.01));
      const got = res.body[name];
      t.ok(
        got >= lo * (1 - 1e-6) && got <= hi * (1 + 1e-6),
        `${name} ${got} within [${lo}, ${hi}] (exact ${rankQuantile(sorted, p)})`,
      );
    }
    t.same(res.body.data.length, 1);
    t.match(res.body.data[0], {
      count: recs.length,
      min: sorted[0],
      max: sorted[sorted.length - 1],
      p99: res.body.p99,
    });

    // Each histogram aggregation picks its value; empty windows: sum/count 0, everything else null.
    const small = recs.slice(0, 300);
    for (const aggregation of ['sum', 'count', 'min', 'max', 'avg', 'p50']) {
      const m = await createMeter(infra, acct.accountId, { type: 'histogram', aggregation });
      await waitForMeter(api, m, W);
      await ingest(t, api, W, m, small);
      await waitUntil(async () => (await storedCount(infra, m.id)) === small.length, `histogram ${aggregation} stored`);
      const r = await getUsage(api, R, m.id, `start_date=${day(now - 3 * DAY)}&end_date=${today}&window=day`);
      const field =
        aggregation === 'sum'
          ? Number(milliText(small.reduce((s, x) => s + Math.round(x.value * 1000), 0)))
          : aggregation === 'count'
            ? small.length
            : r.body[aggregation];
      t.equal(r.body.value, field, `histogram ${aggregation}: value`);
      const emptyDay = r.body.data[0];
      t.same(
        emptyDay,
        {
          start: emptyDay.start,
          end: emptyDay.end,
          value: aggregation === 'sum' || aggregation === 'count' ? 0 : null,
          count: 0,
          min: null,
          max: null,
          avg: null,
          p50: null,
          p90: null,
          p95: null,
          p99: null,
        },
        `histogram ${aggregation}: empty window`,
      );
    }
  });

  t.test('query parameters, tenancy and scope', async (t) => {
    const meter = await createMeter(infra, acct.accountId);
    const other = await createTestAccount(infra);
    const theirs = await getUsage(api, other.auth.read.authorization, meter.id, '');
    t.equal(theirs.status, 404, 'another account’s meter → 404');
    t.equal((await getUsage(api, R, 'mtr_nope', '')).status, 404);
    const bad: [string, string][] = [
      ['start_date=2026-02-30', 'start_date'],
      ['end_date=yesterday', 'end_date'],
      ['window=week', 'window'],
      ['start_date=2024-01-01&end_date=2025-06-01', 'end_date'],
      [`start_date=${today}&end_date=${day(now - DAY)}`, 'start_date'],
      ['page=2', 'page'],
    ];
    for (const [q, field] of bad) {
      const res = await getUsage(api, R, meter.id, q);
      t.equal(res.status, 422, `${q} → 422`);
      t.equal(res.body.code, 'validation_failed');
      t.ok(
        res.body.errors.some((e: any) => e.field === field),
        `${q}: names ${field} (${JSON.stringify(res.body.errors)})`,
      );
    }
    const anon = await fetch(`${api.url}/v1/meters/${meter.id}/usage`);
    t.equal(anon.status, 401);
  });
});
