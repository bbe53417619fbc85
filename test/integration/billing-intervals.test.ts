import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * Billing periods by interval and anchor (docs/billing.md "Billing periods"), worked to the cent against the real
 * api, consumer, ClickHouse and Postgres, with test clocks driving the time (docs/test-clocks.md): a yearly plan
 * whose metered item is billed per month in arrears and whose flat item once, in advance; anniversary billing on the
 * 31st across February in a leap and a common year; a weekly plan on ISO weeks.
 */
t.test('billing intervals and anchors', async (t) => {
  const w = await billingWorld(t);
  const admin = w.operator.tokens.admin;
  /**
   * Backfills usage and waits until reads count it: backfilled past hours reach the hourly rollups (which billing
   * reads too) with the consumer's next sweep.
   */
  const usage = async (who: TestAccount, meter: string, records: { value: number; timestamp: string }[]) => {
    await w.usage(who, meter, records);
    const days = records.map((r) => r.timestamp.slice(0, 10)).sort();
    const total = records.reduce((s, r) => s + r.value, 0);
    const path = `/v1/meters/${meter}/usage?window=none&start_date=${days[0]}&end_date=${days[days.length - 1]}`;
    await waitUntil(
      async () => (await w.made(who.tokens.read, 'GET', path)).value === total,
      'reads to count the usage',
    );
  };
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const advance = async (clockId: string, frozen_time: string) => {
    const r = await call(admin, 'POST', `/v1/test_clocks/${clockId}/advance`, { frozen_time });
    if (r.status !== 200) throw new Error(`advance → ${r.status} ${JSON.stringify(r.body)}`);
  };
  /** A customer on a new clock at `at`, with a working card and an API calls meter. */
  const customerAt = async (at: string) => {
    const a = await createTestAccount(w.api.infra);
    const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: at })).id;
    await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    await w.card(a);
    const meter = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
    return { a, clock, meter };
  };
  const invoicesOf = async (who: TestAccount) =>
    (await w.made(who.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .map((i: any) => ({
        reason: i.reason,
        period_start: i.period_start,
        period_end: i.period_end,
        amount: i.amount,
        status: i.status,
        created_at: i.created_at,
        lines: i.lines.map((l: any) => `${l.type} ${l.quantity} × ${l.unit_price} = ${l.amount}`),
      }))
      .sort((x: any, y: any) => (x.period_start + x.reason).localeCompare(y.period_start + y.reason));
  const calls = await w.product('API calls', 0.01, 'USD', 'metered');

  await t.test('a yearly plan: the flat item once in advance, the metered item per month in arrears', async (t) => {
    const yearly = await w.product('Annual plan', 1200, 'USD');
    const { a, clock, meter } = await customerAt('2025-01-01T00:00:00Z');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: yearly }, { product_id: calls, meter_id: meter }],
      interval: 'year',
    });
    t.match(sub, {
      interval: 'year',
      interval_count: 1,
      billing_anchor: 'calendar',
      trial_end: null,
      current_period_start: '2025-01-01T00:00:00.000Z',
      current_period_end: '2026-01-01T00:00:00.000Z',
    });
    // Month m (1–12) has 100 × m calls on its 15th: 1.00 × m on its invoice.
    await usage(
      a,
      meter,
      Array.from({ length: 12 }, (_, i) => ({
        value: 100 * (i + 1),
        timestamp: `2025-${String(i + 1).padStart(2, '0')}-15T12:00:00Z`,
      })),
    );
    await advance(clock, '2025-12-31T12:00:00Z');
    // Canceled on the year's last day: December's usage is still billed, no second year begins.
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { status: 'canceled' });
    await advance(clock, '2026-01-02T00:00:00Z');
    const invoices = await invoicesOf(a);
    t.equal(invoices.length, 13, '12 monthly usage invoices + 1 flat');
    t.same(invoices[0], {
      reason: 'advance',
      period_start: '2025-01-01',
      period_end: '2025-12-31',
      amount: 1200,
      status: 'paid',
      created_at: '2025-01-01T00:00:00.000Z',
      lines: ['flat 1 × 1200 = 1200'],
    });
    const monthly = invoices.filter((i: any) => i.reason === 'period');
    t.same(
      monthly.map((i: any) => [i.period_start, i.period_end, i.amount, i.lines]),
      Array.from({ length: 12 }, (_, i) => {
        const m = String(i + 1).padStart(2, '0');
        const last = new Date(Date.UTC(2025, i + 1, 0)).getUTCDate();
        return [`2025-${m}-01`, `2025-${m}-${last}`, i + 1, [`usage ${100 * (i + 1)} × 0.01 = ${i + 1}`]];
      }),
      'each month: its usage only, in arrears',
    );
    t.ok(
      monthly.every((i: any) => i.status === 'paid'),
      'every invoice paid',
    );
    t.equal(
      monthly.reduce((s: number, i: any) => s + i.amount, 0),
      78,
      '1 + 2 + … + 12 = 78.00 of usage over the year',
    );
  });

  for (const [year, days] of [
    ['2024', ['2024-01-31', '2024-02-28', '2024-02-29', '2024-03-30', '2024-03-31', '2024-04-29']],
    ['2023', ['2023-01-31', '2023-02-27', '2023-02-28', '2023-03-30', '2023-03-31', '2023-04-29']],
  ] as const) {
    await t.test(`anniversary on the 31st across February ${year}`, async (t) => {
      const monthly = await w.product(`Monthly plan ${year}`, 31, 'USD');
      const { a, clock, meter } = await customerAt(`${year}-01-31T09:00:00Z`);
      const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: monthly }, { product_id: calls, meter_id: meter }],
        billing_anchor: 'start',
      });
      t.match(sub, {
        interval: 'month',
        billing_anchor: 'start',
        current_period_start: `${year}-01-31T00:00:00.000Z`,
        current_period_end: `${days[2]}T00:00:00.000Z`,
      });
      // The last instant of the first period and the first of the second; the 31st of March begins the third.
      await usage(a, meter, [
        { value: 250, timestamp: `${days[1]}T23:59:59.999Z` },
        { value: 123, timestamp: `${days[2]}T00:00:00Z` },
        { value: 77, timestamp: `${days[3]}T23:59:59Z` },
        { value: 1000, timestamp: `${days[4]}T00:00:00Z` },
      ]);
      await advance(clock, `${days[5]}T12:00:00Z`);
      t.same(
        (await invoicesOf(a)).map((i: any) => [i.period_start, i.period_end, i.amount, i.lines]),
        [
          [days[0], days[1], 33.5, ['flat 1 × 31 = 31', 'usage 250 × 0.01 = 2.5']],
          [days[2], days[3], 33, ['flat 1 × 31 = 31', 'usage 200 × 0.01 = 2']],
        ],
        `31 Jan → ${days[2].slice(5)} → 31 Mar: the day kept, clamped in February`,
      );
      await advance(clock, `${year}-05-01T12:00:00Z`);
      const third = (await invoicesOf(a))[2];
      t.match(third, { period_start: `${year}-03-31`, period_end: `${year}-04-29`, amount: 41 });
    });
  }

  await t.test('a weekly plan: ISO weeks from Monday, across the new year', async (t) => {
    const weekly = await w.product('Weekly plan', 10, 'USD');
    // Wednesday 31 December 2025: its ISO week began on Monday the 29th.
    const { a, clock, meter } = await customerAt('2025-12-31T15:00:00Z');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: weekly }, { product_id: calls, meter_id: meter }],
      interval: 'week',
    });
    t.match(sub, {
      interval: 'week',
      current_period_start: '2025-12-29T00:00:00.000Z',
      current_period_end: '2026-01-05T00:00:00.000Z',
    });
    await usage(a, meter, [
      { value: 345, timestamp: '2026-01-04T23:59:59Z' },
      { value: 1, timestamp: '2026-01-05T00:00:00Z' },
      { value: 49, timestamp: '2026-01-11T22:00:00Z' },
    ]);
    await advance(clock, '2026-01-12T02:00:00Z');
    t.same(
      (await invoicesOf(a)).map((i: any) => [i.period_start, i.period_end, i.amount, i.lines]),
      [
        ['2025-12-29', '2026-01-04', 13.45, ['flat 1 × 10 = 10', 'usage 345 × 0.01 = 3.45']],
        ['2026-01-05', '2026-01-11', 10.5, ['flat 1 × 10 = 10', 'usage 50 × 0.01 = 0.5']],
      ],
    );
  });

  await t.test('an advance invoice once per period: two runs at once, then a third', async (t) => {
    const plan = await w.product('Annual seat', 99.99, 'USD');
    const a = await createTestAccount(w.api.infra);
    await w.card(a);
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan, quantity: 3 }],
      interval: 'year',
    });
    const year = new Date().getUTCFullYear();
    t.match(sub, { current_period_start: `${year}-01-01T00:00:00.000Z` });
    const now = new Date().toISOString();
    const [r1, r2] = await Promise.all([w.run(now), w.run(now)]);
    t.equal(r1.code, 0, r1.stderr);
    t.equal(r2.code, 0, r2.stderr);
    const r3 = await w.run(now);
    t.equal(r3.code, 0, r3.stderr);
    const invoices = await invoicesOf(a);
    t.same(
      invoices.map((i: any) => [i.reason, i.period_start, i.period_end, i.amount, i.status, i.lines]),
      [['advance', `${year}-01-01`, `${year}-12-31`, 299.97, 'paid', ['flat 3 × 99.99 = 299.97']]],
      'one advance invoice for the year, the flat item in full',
    );
    const [{ id }] = (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices')).data;
    t.equal(await w.charges(id), 1, 'charged once');
    // Its usage months have nothing to bill (no usage-priced item): no empty invoice, the subscription moves on.
    const month = new Date();
    const nextMonth = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1, 2));
    t.equal((await w.run(nextMonth.toISOString())).code, 0);
    t.equal((await invoicesOf(a)).length, 1, 'still one invoice after the month closed');
    const row = await w.api.infra.pg.query('SELECT billing_period_start FROM subscriptions WHERE id = $1', [sub.id]);
    t.equal(
      row.rows[0].billing_period_start.toISOString(),
      new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString(),
    );
  });

  await t.test('bad terms → 422 naming the field; nothing written', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const flat = await w.product('Plan', 5, 'USD');
    for (const [body, field] of [
      [{ interval: 'fortnight' }, 'interval'],
      [{ interval_count: 13 }, 'interval_count'],
      [{ interval_count: 0 }, 'interval_count'],
      [{ billing_anchor: 'end' }, 'billing_anchor'],
      [{ trial_days: 0 }, 'trial_days'],
      [{ trial_end: '2020-01-01T00:00:00Z' }, 'trial_end'],
      [{ trial_end: '2099-01-01T00:00:00Z', trial_days: 3 }, 'trial_days'],
    ] as const) {
      const r = await call(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }], ...body });
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(JSON.stringify(r.body).includes(field), `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body)}`);
    }
    t.same((await w.made(a.tokens.read, 'GET', '/v1/subscriptions')).data, []);
  });
});
