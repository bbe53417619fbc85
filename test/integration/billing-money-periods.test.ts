import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * Money across periods (issue 41 items 1, 6, 8, 9) against the real api, consumer, billing engine, ClickHouse and
 * Postgres, with test clocks driving the time:
 * - coupons on yearly and quarterly plans, applied at creation and mid-period (docs/coupons.md "Which invoices"):
 *   `once` discounts one invoice — the next — and `repeating` N usage months from the month it is applied in;
 * - a flat-only yearly plan with a coupon writes its advance invoice and no zero invoice each month;
 * - prepaid credit across two subscriptions' threshold checks: no threshold invoice at 0; an open invoice with
 *   nothing to pay is settled without a charge;
 * - a `max` meter across a change of its item: the peak billed once.
 * Each case fails on the code before the fix (the figures before are in the assertions' messages).
 */
t.test('money across periods', async (t) => {
  const w = await billingWorld(t);
  const admin = w.operator.tokens.admin;
  const pg = w.api.infra.pg;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const advance = async (clockId: string, frozen_time: string) => {
    const r = await call(admin, 'POST', `/v1/test_clocks/${clockId}/advance`, { frozen_time });
    if (r.status !== 200) throw new Error(`advance → ${r.status} ${JSON.stringify(r.body)}`);
  };
  const usage = async (who: TestAccount, meter: string, records: { value: number; timestamp: string }[]) => {
    await w.usage(who, meter, records);
  };
  const readsCount = async (who: TestAccount, meter: string, from: string, to: string, value: number) =>
    waitUntil(
      async () =>
        (
          await w.made(
            who.tokens.read,
            'GET',
            `/v1/meters/${meter}/usage?window=none&start_date=${from}&end_date=${to}`,
          )
        ).value === value,
      `reads of ${meter} ${from}…${to} at ${value}`,
    );
  const invoicesOf = async (who: TestAccount) =>
    (await w.made(who.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort((x: any, y: any) =>
      (x.period_start + x.reason).localeCompare(y.period_start + y.reason),
    );
  /** [reason, period_start, amount, discount] of each invoice, oldest first. */
  const summary = async (who: TestAccount) =>
    (await invoicesOf(who)).map((i: any) => [
      i.reason,
      i.period_start,
      i.amount,
      i.lines.filter((l: any) => l.type === 'discount').reduce((s: number, l: any) => s + l.amount, 0),
    ]);
  const coupon = (body: Record<string, unknown>) => w.made(admin, 'POST', '/v1/coupons', body);
  const calls = await w.product('API calls', 0.01, 'USD', 'metered');

  await t.test('yearly and quarterly plans: coupons applied at creation and mid-period', async (t) => {
    const yearly = await w.product('Annual plan', 1200, 'USD');
    const quarterly = await w.product('Quarterly plan', 300, 'USD');
    const ten = await coupon({ name: 'TEN', amount_off: 10, currency: 'USD', duration: 'once' });
    const halfOnce = await coupon({ name: 'HALF1', percent_off: 50, duration: 'once' });
    const half3 = await coupon({ name: 'HALF3', percent_off: 50, duration: 'repeating', duration_in_periods: 3 });
    const half2 = await coupon({ name: 'HALF2', percent_off: 50, duration: 'repeating', duration_in_periods: 2 });
    const quarterOff = await coupon({ name: 'QUARTER', percent_off: 25, duration: 'forever' });
    const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: '2025-01-01T00:00:00Z' })).id;
    const customer = async (name: string, items: (meter: string) => unknown[], terms: Record<string, unknown>) => {
      const a = await createTestAccount(w.api.infra, { name });
      await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
      await w.card(a);
      const meter = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
      const sub = await w.made(admin, 'POST', '/v1/subscriptions', {
        customer_id: a.customerId,
        items: items(meter),
        ...terms,
      });
      return { a, meter, sub };
    };
    const planAndCalls = (plan: string) => (meter: string) => [
      { product_id: plan },
      { product_id: calls, meter_id: meter },
    ];
    const y1 = await customer('Yearly once at creation', planAndCalls(yearly), { interval: 'year', coupon_id: ten.id });
    const y2 = await customer('Yearly once in September', planAndCalls(yearly), { interval: 'year' });
    const y3 = await customer('Yearly repeating in September', planAndCalls(yearly), { interval: 'year' });
    const q1 = await customer('Quarterly once in February', planAndCalls(quarterly), { interval: 'quarter' });
    const q2 = await customer('Quarterly repeating at creation', planAndCalls(quarterly), {
      interval: 'quarter',
      coupon_id: half2.id,
    });
    const y4 = await customer('Yearly repeating at creation', planAndCalls(yearly), {
      interval: 'year',
      coupon_id: half2.id,
    });
    const q3 = await customer('Quarterly repeating in February', planAndCalls(quarterly), { interval: 'quarter' });
    const flat = await customer('Flat-only yearly', () => [{ product_id: yearly }], {
      interval: 'year',
      coupon_id: quarterOff.id,
    });
    t.match(y1.sub.discount, { coupon: { id: ten.id }, start: '2025-01-01T00:00:00.000Z' });
    await usage(y1.a, y1.meter, [{ value: 500, timestamp: '2025-01-15T00:00:00Z' }]);
    for (const y of [y2, y3])
      await usage(y.a, y.meter, [
        { value: 1500, timestamp: '2025-09-20T00:00:00Z' },
        { value: 1000, timestamp: '2025-10-15T00:00:00Z' },
        { value: 800, timestamp: '2025-11-15T00:00:00Z' },
        { value: 600, timestamp: '2025-12-15T00:00:00Z' },
      ]);
    await usage(q1.a, q1.meter, [
      { value: 1000, timestamp: '2025-02-20T00:00:00Z' },
      { value: 400, timestamp: '2025-03-15T00:00:00Z' },
    ]);
    await usage(q2.a, q2.meter, [
      { value: 200, timestamp: '2025-01-15T00:00:00Z' },
      { value: 100, timestamp: '2025-02-15T00:00:00Z' },
      { value: 400, timestamp: '2025-03-15T00:00:00Z' },
    ]);
    await usage(y4.a, y4.meter, [
      { value: 200, timestamp: '2025-01-15T00:00:00Z' },
      { value: 300, timestamp: '2025-02-15T00:00:00Z' },
      { value: 400, timestamp: '2025-03-15T00:00:00Z' },
    ]);
    await usage(q3.a, q3.meter, [
      { value: 1000, timestamp: '2025-02-20T00:00:00Z' },
      { value: 400, timestamp: '2025-03-15T00:00:00Z' },
    ]);
    await readsCount(y4.a, y4.meter, '2025-01-01', '2025-03-31', 900);
    await readsCount(q3.a, q3.meter, '2025-02-01', '2025-03-31', 1400);
    await readsCount(y1.a, y1.meter, '2025-01-01', '2025-01-31', 500);
    await readsCount(y2.a, y2.meter, '2025-09-01', '2025-12-31', 3900);
    await readsCount(y3.a, y3.meter, '2025-09-01', '2025-12-31', 3900);
    await readsCount(q1.a, q1.meter, '2025-02-01', '2025-03-31', 1400);
    await readsCount(q2.a, q2.meter, '2025-01-01', '2025-03-31', 700);

    await advance(clock, '2025-02-10T12:00:00Z');
    const q1sub = await w.made(admin, 'PATCH', `/v1/subscriptions/${q1.sub.id}`, { coupon_id: halfOnce.id });
    await w.made(admin, 'PATCH', `/v1/subscriptions/${q3.sub.id}`, { coupon_id: half2.id });
    t.equal(q1sub.discount.start, '2025-02-01T00:00:00.000Z', 'quarterly: the coupon starts with the usage month');
    await advance(clock, '2025-09-15T12:00:00Z');
    const y2sub = await w.made(admin, 'PATCH', `/v1/subscriptions/${y2.sub.id}`, { coupon_id: ten.id });
    await w.made(admin, 'PATCH', `/v1/subscriptions/${y3.sub.id}`, { coupon_id: half3.id });
    t.equal(y2sub.discount.start, '2025-09-01T00:00:00.000Z', 'yearly: the coupon starts with the usage month');
    await advance(clock, '2026-01-02T00:00:00Z');

    // Yearly, `once` 10.00 at creation: the advance invoice only (before: January's usage invoice too, 5.00 − 5.00).
    const s1 = await summary(y1.a);
    t.same(
      s1.slice(0, 2),
      [
        ['advance', '2025-01-01', 1190, -10],
        ['period', '2025-01-01', 5, 0],
      ],
      'once at creation: 1,200 − 10 in advance; January 5.00 undiscounted',
    );
    t.equal(s1.filter((x: any) => x[3] !== 0).length, 1, 'one invoice discounted in all');

    // Yearly, `once` 10.00 on 15 September: the September usage invoice (before: nothing — 8 usage invoices since
    // January counted against it).
    const s2 = await summary(y2.a);
    t.same(
      s2.filter((x: any) => x[1] >= '2025-09-01'),
      [
        ['period', '2025-09-01', 5, -10],
        ['period', '2025-10-01', 10, 0],
        ['period', '2025-11-01', 8, 0],
        ['period', '2025-12-01', 6, 0],
        ['advance', '2026-01-01', 1200, 0],
      ],
      'once on 15 September: September 15.00 − 10.00 (before: 15.00), nothing after',
    );
    t.same(s2[0], ['advance', '2025-01-01', 1200, 0], "the year's advance invoice was issued before the coupon");

    // Yearly, `repeating` 3 at 50 % on 15 September: September, October, November (before: nothing).
    const s3 = await summary(y3.a);
    t.same(
      s3.filter((x: any) => x[1] >= '2025-09-01'),
      [
        ['period', '2025-09-01', 7.5, -7.5],
        ['period', '2025-10-01', 5, -5],
        ['period', '2025-11-01', 4, -4],
        ['period', '2025-12-01', 6, 0],
        ['advance', '2026-01-01', 1200, 0],
      ],
      'repeating 3 from September: three usage months at 50 % (before: none)',
    );

    // Quarterly, `once` 50 % on 10 February: the February usage invoice (before: nothing).
    const s4 = await summary(q1.a);
    t.same(
      s4.filter((x: any) => x[1] <= '2025-04-01'),
      [
        ['advance', '2025-01-01', 300, 0],
        ['period', '2025-01-01', 0, 0],
        ['period', '2025-02-01', 5, -5],
        ['period', '2025-03-01', 4, 0],
        ['advance', '2025-04-01', 300, 0],
        ['period', '2025-04-01', 0, 0],
      ],
      'once on 10 February: February 10.00 − 5.00 (before: 10.00)',
    );

    // Quarterly, `repeating` 2 at 50 % at creation: the advance invoice and the usage of January and February.
    const s5 = await summary(q2.a);
    t.same(
      s5.filter((x: any) => x[1] <= '2025-04-01'),
      [
        ['advance', '2025-01-01', 150, -150],
        ['period', '2025-01-01', 1, -1],
        ['period', '2025-02-01', 0.5, -0.5],
        ['period', '2025-03-01', 4, 0],
        ['advance', '2025-04-01', 300, 0],
        ['period', '2025-04-01', 0, 0],
      ],
      'repeating 2 at creation: the first quarter in advance, January and February',
    );

    // Yearly, `repeating` 2 at 50 % at creation: the advance invoice, January and February.
    t.same(
      (await summary(y4.a)).filter((x: any) => x[1] <= '2025-04-01'),
      [
        ['advance', '2025-01-01', 600, -600],
        ['period', '2025-01-01', 1, -1],
        ['period', '2025-02-01', 1.5, -1.5],
        ['period', '2025-03-01', 4, 0],
        ['period', '2025-04-01', 0, 0],
      ],
      'repeating 2 at creation on a yearly plan: the year in advance, January and February',
    );

    // Quarterly, `repeating` 2 at 50 % on 10 February: February and March, not the April advance (before: nothing).
    t.same(
      (await summary(q3.a)).filter((x: any) => x[1] <= '2025-04-01'),
      [
        ['advance', '2025-01-01', 300, 0],
        ['period', '2025-01-01', 0, 0],
        ['period', '2025-02-01', 5, -5],
        ['period', '2025-03-01', 2, -2],
        ['advance', '2025-04-01', 300, 0],
        ['period', '2025-04-01', 0, 0],
      ],
      'repeating 2 from 10 February on a quarterly plan: February and March (before: none)',
    );

    // Flat-only yearly with a forever coupon: its advance invoices only (before: a numbered 0 invoice every month).
    t.same(
      await summary(flat.a),
      [
        ['advance', '2025-01-01', 900, -300],
        ['advance', '2026-01-01', 900, -300],
      ],
      'flat-only yearly with a coupon: no invoice of 0 for its months (before: 12 of them in 2025)',
    );
  });

  await t.test('threshold checks share prepaid credit; nothing is ever charged 0', async (t) => {
    const units = await w.product('Units', 1, 'USD', 'metered');
    const a = await createTestAccount(w.api.infra, { name: 'Credit and thresholds' });
    const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
    await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    await w.card(a);
    await w.made(admin, 'POST', '/v1/billing/credits', {
      account_id: a.accountId,
      currency: 'USD',
      amount: 200,
      description: 'Prepaid',
    });
    const meters = [
      await w.meter(a, 'Units A', 'units', 'counter', 'sum'),
      await w.meter(a, 'Units B', 'units', 'counter', 'sum'),
    ];
    const subs: any[] = [];
    for (const m of meters)
      subs.push(
        await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: units, meter_id: m }] }),
      );
    // The threshold pass takes subscriptions in id order: A (150, threshold 1,000) first, B (120, threshold 50) next.
    // Id order as Postgres (locale C) sorts: by code unit, not localeCompare's 'a' before 'H'.
    const order = [0, 1].sort((x, y) => (subs[x].id < subs[y].id ? -1 : 1));
    const [A, B] = order.map((i) => ({ sub: subs[i], meter: meters[i]! }));
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${A!.sub.id}`, { billing_threshold: { amount: 1000 } });
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${B!.sub.id}`, { billing_threshold: { amount: 50 } });
    await usage(a, A!.meter, [{ value: 150, timestamp: '2026-10-02T00:00:00Z' }]);
    await usage(a, B!.meter, [{ value: 120, timestamp: '2026-10-02T00:00:00Z' }]);
    await readsCount(a, A!.meter, '2026-10-01', '2026-10-31', 150);
    await readsCount(a, B!.meter, '2026-10-01', '2026-10-31', 120);
    await advance(clock, '2026-10-05T00:00:00Z');
    await advance(clock, '2026-10-06T00:00:00Z');
    const mid = await invoicesOf(a);
    t.same(
      mid.map((i: any) => [i.reason, i.amount, i.status]),
      [],
      'credit 200 covers 150 + 120 − … : B owes 0 after its credit, so no threshold invoice (before: B issued at 0, open)',
    );
    await advance(clock, '2026-11-01T02:00:00Z');
    const closed = await invoicesOf(a);
    t.equal(closed.length, 2, 'the two period invoices');
    t.equal(
      closed.reduce((s: number, i: any) => s + i.amount, 0),
      70,
      '150 + 120 − 200 of credit = 70 charged in all',
    );
    t.ok(
      closed.every((i: any) => i.status === 'paid'),
      'both paid',
    );
    t.same(
      await Promise.all(closed.map((i: any) => w.charges(i.id))),
      closed.map((i: any) => (i.amount > 0 ? 1 : 0)),
      'charged once when something is due, never at 0',
    );

    // An open invoice with nothing to pay (as the old threshold pass wrote B), with an attempt left pending: the
    // payment pass settles it as paid without a charge (before: the charge of 0 was refused and retried every run).
    const zero = closed.find((i: any) => i.amount === 0) ?? closed[0];
    await pg.query(
      `UPDATE invoices SET status = 'open', paid_at = NULL, amount = 0, amount_credited = 0, attempt_count = 1,
              next_payment_attempt_at = '2026-11-01T03:00:00Z' WHERE id = $1`,
      [zero.id],
    );
    const pm = (await pg.query(`SELECT id FROM payment_methods WHERE account_id = $1 AND is_default`, [a.accountId]))
      .rows[0].id;
    await pg.query(
      `INSERT INTO payment_attempts (invoice_id, attempt, payment_method_id, idempotency_key, status, manual, created_at)
       VALUES ($1, 1, $2, $1 || ':1', 'pending', false, '2026-11-01T02:00:00Z')`,
      [zero.id, pm],
    );
    await advance(clock, '2026-11-01T04:00:00Z');
    const settled = (await pg.query(`SELECT status, next_payment_attempt_at FROM invoices WHERE id = $1`, [zero.id]))
      .rows[0];
    t.same(settled, { status: 'paid', next_payment_attempt_at: null }, 'settled without a charge');
    t.equal(await w.charges(zero.id), 0, 'the processor never saw a charge for it');
    const attempts = await pg.query(`SELECT status, failure_code FROM payment_attempts WHERE invoice_id = $1`, [
      zero.id,
    ]);
    t.same(attempts.rows, [{ status: 'failed', failure_code: 'nothing_to_charge' }], 'the pending attempt closed');
  });

  await t.test('a max meter across a change of its item: the peak billed once', async (t) => {
    const peak = await w.product('Peak storage', 0.25, 'USD', 'metered');
    const a = await createTestAccount(w.api.infra, { name: 'Peaks' });
    const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
    await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    await w.card(a);
    const gauge = await w.meter(a, 'Storage', 'GB', 'gauge', 'max');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: peak, meter_id: gauge }],
    });
    await usage(a, gauge, [
      { value: 12.5, timestamp: '2026-10-05T00:00:00Z' },
      { value: 12.5, timestamp: '2026-10-20T00:00:00Z' },
      { value: 4, timestamp: '2026-10-25T00:00:00Z' },
    ]);
    await readsCount(a, gauge, '2026-10-01', '2026-10-31', 12.5);
    await advance(clock, '2026-10-16T00:00:00Z');
    // Only the minimum changes: the item keeps its product and meter (a new version from the 16th).
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      items: [{ product_id: peak, meter_id: gauge, minimum_amount: 1 }],
    });
    await advance(clock, '2026-11-01T02:00:00Z');
    const [october] = await invoicesOf(a);
    t.same(
      october.lines.map((l: any) => [l.type, l.quantity, l.amount]),
      [['usage', 12.5, 3.13]],
      'one usage line: max 12.5 × 0.25 = 3.125 → 3.13 (before: two lines, 3.13 + 3.13)',
    );
    t.equal(october.amount, 3.13);
    t.match(october.lines[0].description, /^Peak storage — 12\.5 GB/, 'over the whole month');
  });
});
