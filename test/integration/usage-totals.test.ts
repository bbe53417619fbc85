import t from 'tap';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';
import type { MeterType } from '../../shared/meters/record.js';
import { queryUsage, queryUsageTotals, type UsageTotalsRequest } from '../../services/domain/usage/query.js';
import { usageQuantity } from '../../services/domain/usage/aggregate.js';
import { USAGE_TABLE } from '../../shared/usage/wire.js';

const DAY = 86_400_000;

interface Rec {
  account: string;
  meter: string;
  ts: number;
  id: string;
  /** thousandths: exact integer maths for the expectation */
  milli: number;
}

const text = (milli: number) => new Decimal(milli).div(1000).toFixed();

t.test('queryUsageTotals: many meters, few queries, duplicates once, in request order', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const ch = infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const t0 = Date.UTC(2026, 9, 1);
  const types: MeterType[] = ['counter', 'gauge', 'histogram'];
  const meters = Array.from({ length: 12 }, (_, i) => ({
    account: i % 2 ? 'acc_b' : 'acc_a',
    meter: `mtr_${i}`,
    type: types[i % 3]!,
  }));
  const recs: Rec[] = [];
  for (const m of meters) {
    for (let i = 0; i < 400; i++)
      recs.push({
        account: m.account,
        meter: m.meter,
        ts: t0 + Math.floor(rand() * 40 * DAY),
        id: `r${i}`,
        milli: Math.floor(rand() * 2_000_000) - (m.type === 'counter' ? 0 : 500_000),
      });
  }
  // Every record once, then a quarter of them again in a separate INSERT (a client retry / redelivery).
  const row = (r: Rec) => ({
    account_id: r.account,
    meter_id: r.meter,
    ts_ms: r.ts,
    record_id: r.id,
    value: Number(text(r.milli)),
    received_ms: r.ts,
  });
  await ch.insert({ table: `${db}.${USAGE_TABLE}`, values: recs.map(row), format: 'JSONEachRow' });
  await ch.insert({
    table: `${db}.${USAGE_TABLE}`,
    values: recs.filter(() => rand() < 0.25).map(row),
    format: 'JSONEachRow',
  });

  const ranges = [
    [t0, t0 + 31 * DAY],
    [t0 + 31 * DAY, t0 + 61 * DAY],
    [t0 + 3 * DAY + 1234, t0 + 9 * DAY - 77], // not aligned to hours: a canceled subscription's period end
  ] as const;
  const requests: UsageTotalsRequest[] = [];
  for (const [startMs, endMs] of ranges)
    for (const m of meters) requests.push({ accountId: m.account, meterId: m.meter, type: m.type, startMs, endMs });
  // Another account's meter id and an unknown meter: nothing, never someone else's usage.
  requests.push({ accountId: 'acc_b', meterId: 'mtr_0', type: 'counter', startMs: t0, endMs: t0 + 61 * DAY });
  requests.push({ accountId: 'acc_a', meterId: 'mtr_none', type: 'gauge', startMs: t0, endMs: t0 + 61 * DAY });
  const shuffled = [...requests].sort(() => rand() - 0.5);

  const totals = await queryUsageTotals(ch, db, shuffled);
  t.equal(totals.length, shuffled.length, 'one answer per request');
  for (const [i, req] of shuffled.entries()) {
    const got = totals[i]!;
    const mine = recs.filter(
      (r) => r.account === req.accountId && r.meter === req.meterId && r.ts >= req.startMs && r.ts < req.endMs,
    );
    const label = `${req.accountId}/${req.meterId} ${req.startMs}-${req.endMs}`;
    t.same([got.start, got.end, got.count], [req.startMs, req.endMs, mine.length], `${label}: range and count`);
    t.ok(new Decimal(got.sum).eq(new Decimal(mine.reduce((a, r) => a + r.milli, 0)).div(1000)), `${label}: exact sum`);
    if (mine.length === 0) {
      t.equal(got.min, undefined, `${label}: empty`);
      continue;
    }
    if (req.type !== 'counter') {
      t.ok(new Decimal(got.min!).eq(text(Math.min(...mine.map((r) => r.milli)))), `${label}: min`);
      t.ok(new Decimal(got.max!).eq(text(Math.max(...mine.map((r) => r.milli)))), `${label}: max`);
    }
    if (req.type === 'gauge') {
      const last = mine.reduce((a, r) => (r.ts > a.ts || (r.ts === a.ts && r.id > a.id) ? r : a));
      t.ok(new Decimal(got.last!).eq(text(last.milli)), `${label}: last`);
      t.ok(usageQuantity(got, 'last').eq(text(last.milli)), `${label}: billing quantity = the API's value`);
    }
    if (req.type === 'histogram') t.equal(got.percentiles?.length, 4, `${label}: percentiles`);
    // The route's window=none answer is this same function; a day-windowed read agrees on the total.
    const byDay = await queryUsage(ch, db, {
      ...req,
      startMs: Math.floor(req.startMs / DAY) * DAY,
      endMs: Math.ceil(req.endMs / DAY) * DAY,
      window: 'none',
    });
    t.ok(byDay.total.count >= got.count, `${label}: the covering day range holds at least as much`);
  }
});
