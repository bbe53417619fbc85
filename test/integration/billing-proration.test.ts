import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Proration (issue 17 §6, docs/design.md §8 Subscription): changing a subscription's items mid-period bills
 * flat items for the seconds they were on — price × quantity × seconds on / seconds in the period, rounded
 * once at the line — and metered items for the usage timestamped while they were on. Changes go through
 * PATCH /v1/subscriptions/{id}; each change's instant is then moved to a known second of October 2026 (as
 * `backdate` moves the creation), so every amount is checked to the cent against a hand calculation.
 */
const sumOfLines = (inv: { lines: { amount: number }[] }) =>
  inv.lines.reduce((s, l) => s.plus(String(l.amount)), new Decimal(0));

t.test('proration: items added, removed and changed mid-period, to the cent', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Prorated Co' });
  await w.card(a);
  const plan = await w.product('Plan', 30, 'USD');
  const addon = await w.product('Add-on', 10, 'USD');
  const callsProduct = await w.product('Calls', 0.01, 'USD', 'metered');
  const calls = await w.meter(a, 'Calls', 'calls', 'counter', 'sum');
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: callsProduct, meter_id: calls }],
  });
  await w.backdate(sub.id, '2026-10-05T00:00:00Z');

  /** PATCHes the items, then moves that change (it happened now) back to `at` (later than every earlier change). */
  const change = async (items: unknown[], at: string) => {
    const r = await callJson(w.api.url, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { items });
    t.equal(r.status, 200, JSON.stringify(r.body));
    const moved = await w.api.infra.pg.query(
      `UPDATE subscription_items SET effective_from = CASE WHEN effective_from > $2 THEN $2 ELSE effective_from END,
                                     effective_to = CASE WHEN effective_to > $2 THEN $2 ELSE effective_to END
        WHERE subscription_id = $1 AND (effective_from > $2 OR effective_to > $2)`,
      [sub.id, at],
    );
    t.ok(moved.rowCount! > 0, `the change is moved to ${at}`);
    return r.body;
  };

  await t.test(
    'quantity is for flat items only (422 naming the field); a subscription shows it when not 1',
    async (t) => {
      const r = await callJson(w.api.url, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
        items: [{ product_id: callsProduct, meter_id: calls, quantity: 2 }],
      });
      t.equal(r.status, 422);
      t.same(
        r.body.errors.map((e: any) => e.field),
        ['items[0].quantity'],
      );
    },
  );

  // 100 calls while the metered item was on, 50 after it was removed (not billed).
  await w.usage(a, calls, [
    { value: 100, timestamp: '2026-10-22T00:00:00Z' },
    { value: 50, timestamp: '2026-10-28T00:00:00Z' },
  ]);
  // October 2026 has 31 days = 2,678,400 s.
  const updated = await change(
    [
      { product_id: plan, quantity: 3 },
      { product_id: callsProduct, meter_id: calls },
    ],
    '2026-10-10T12:00:00Z',
  );
  t.same(updated.items, [
    { product_id: plan, meter_id: null, quantity: 3 },
    { product_id: callsProduct, meter_id: calls },
  ]);
  await change(
    [{ product_id: plan, quantity: 3 }, { product_id: callsProduct, meter_id: calls }, { product_id: addon }],
    '2026-10-18T03:00:00Z',
  );
  await change([{ product_id: plan, quantity: 3 }, { product_id: addon }], '2026-10-25T00:00:00Z');

  const invoices = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));

  await t.test('October: each interval billed for its seconds; re-running the close changes nothing', async (t) => {
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
    const [october] = await invoices();
    t.same(
      october.lines.map((l: any) => [l.type, l.product_id, l.description, l.quantity, l.unit_price, l.amount]),
      [
        // 30 × 820,800 / 2,678,400 = 9.1935… → 9.19 (2026-10-01 00:00 to 10-10 12:00: 9 d 12 h)
        [
          'flat',
          plan,
          'Plan — pro-rated 9 d 12 h of 31 d (2026-10-01 00:00:00 to 2026-10-10 12:00:00 UTC)',
          1,
          30,
          9.19,
        ],
        // 3 × 30 × 1,857,600 / 2,678,400 = 62.4193… → 62.42 (21 d 12 h)
        [
          'flat',
          plan,
          'Plan × 3 — pro-rated 21 d 12 h of 31 d (2026-10-10 12:00:00 to 2026-11-01 00:00:00 UTC)',
          3,
          30,
          62.42,
        ],
        // the metered item until its removal: the 100 calls of the 22nd, not the 50 of the 28th
        [
          'usage',
          callsProduct,
          'Calls — 100 calls — pro-rated 24 d of 31 d (2026-10-01 00:00:00 to 2026-10-25 00:00:00 UTC)',
          100,
          0.01,
          1,
        ],
        // 10 × 1,198,800 / 2,678,400 = 4.4758… → 4.48 (13 d 21 h)
        [
          'flat',
          addon,
          'Add-on — pro-rated 13 d 21 h of 31 d (2026-10-18 03:00:00 to 2026-11-01 00:00:00 UTC)',
          1,
          10,
          4.48,
        ],
      ],
    );
    t.equal(october.amount, 77.09, '9.19 + 1.00 + 62.42 + 4.48');
    t.equal(october.amount, sumOfLines(october).toNumber(), 'amount = Σ lines');
    const again = await w.run('2026-11-01T01:00:00Z');
    t.same(work(again.json), { invoices: [], payments: [] });
    const after = (await invoices())[0];
    t.same(
      [after.id, after.amount, after.lines],
      [october.id, october.amount, october.lines],
      'the invoice is as it was',
    );
    t.equal(await w.charges(october.id), 1, 'charged once');
  });

  await t.test('the current period: the upcoming invoice pro-rates as its close does', async (t) => {
    // The add-on is removed halfway between the start of this month and now (whole seconds).
    const now = Date.now();
    const start = new Date(now);
    const periodStart = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1);
    const periodEnd = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
    const removedAt = periodStart + Math.floor((now - periodStart) / 2000) * 1000;
    await change([{ product_id: plan, quantity: 3 }], new Date(removedAt).toISOString());
    const addonAmount = new Decimal(10)
      .times(removedAt - periodStart)
      .div(periodEnd - periodStart)
      .toDecimalPlaces(2, Decimal.ROUND_HALF_UP)
      .toNumber();
    const expected = [
      ['flat', plan, 'Plan × 3', 3, 30, 90],
      [
        'flat',
        addon,
        new RegExp(
          `^Add-on — pro-rated .+ of ${(periodEnd - periodStart) / 86_400_000} d \\(${new Date(periodStart).toISOString().slice(0, 10)} 00:00:00 to ${new Date(removedAt).toISOString().slice(0, 19).replace('T', ' ')} UTC\\)$`,
        ),
        1,
        10,
        addonAmount,
      ],
    ];
    const shape = (inv: any) =>
      inv.lines.map((l: any) => [l.type, l.product_id, l.description, l.quantity, l.unit_price, l.amount]);
    const up = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.match(shape(up), expected, 'the upcoming invoice');
    t.equal(up.amount, new Decimal(90).plus(addonAmount).toNumber());
    const run = await w.run(new Date(periodEnd + 3_600_000).toISOString());
    t.equal(run.code, 0, run.stderr);
    const current = (await invoices()).at(-1);
    t.equal(current.period_start, new Date(periodStart).toISOString().slice(0, 10));
    t.same(shape(current), shape(up), 'the closed invoice has the upcoming invoice’s lines');
    t.equal(current.amount, sumOfLines(current).toNumber(), 'amount = Σ lines');
  });
});

t.test('a grouped item removed mid-period: its groups, and their late usage, count only while it was on', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Grouped Prorated Co' });
  await w.card(a);
  const plan = await w.product('Plan', 30, 'USD');
  const tokensProduct = await w.product('Tokens', 0.01, 'USD', 'metered');
  const tokens = await w.meter(a, 'Tokens', 'tokens', 'counter', 'sum');
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: tokensProduct, meter_id: tokens, group_by: ['model'] }],
  });
  await w.backdate(sub.id, '2026-10-05T00:00:00Z');
  await w.usage(a, tokens, [
    { value: 100, timestamp: '2026-10-21T00:00:00Z', dimensions: { model: 'a' } },
    { value: 200, timestamp: '2026-10-22T00:00:00Z', dimensions: { model: 'b' } },
    { value: 400, timestamp: '2026-10-28T00:00:00Z', dimensions: { model: 'a' } }, // after the removal: not billed
  ]);
  // The tokens item is removed; the change is moved to 2026-10-25 00:00 (24 d of October's 31).
  const r = await callJson(w.api.url, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
    items: [{ product_id: plan }],
  });
  t.equal(r.status, 200, JSON.stringify(r.body));
  const moved = await w.api.infra.pg.query(
    `UPDATE subscription_items SET effective_to = $2 WHERE subscription_id = $1 AND effective_to > $2`,
    [sub.id, '2026-10-25T00:00:00Z'],
  );
  t.equal(moved.rowCount, 1, 'the removal is moved to 2026-10-25');
  const invoices = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));
  const shape = (inv: any) => inv.lines.map((l: any) => [l.type, l.description, l.amount]);
  const interval = 'pro-rated 24 d of 31 d (2026-10-01 00:00:00 to 2026-10-25 00:00:00 UTC)';

  t.equal((await w.run('2026-11-01T01:00:00Z')).code, 0);
  const [october] = await invoices();
  t.same(
    shape(october),
    [
      ['flat', 'Plan', 30],
      ['usage', `Tokens — model a — 100 tokens — ${interval}`, 1],
      ['usage', `Tokens — model b — 200 tokens — ${interval}`, 2],
    ],
    'each group bills the usage of the time the item was on, and says so',
  );
  t.equal(october.amount, 33);

  // Late records: model a inside the interval (billed), model b after the removal (not billed).
  await w.usage(a, tokens, [
    { value: 50, timestamp: '2026-10-23T00:00:00Z', dimensions: { model: 'a' } },
    { value: 70, timestamp: '2026-10-29T00:00:00Z', dimensions: { model: 'b' } },
  ]);
  for (const _ of [1, 2]) t.equal((await w.run('2026-12-01T01:00:00Z')).code, 0);
  const all = await invoices();
  t.equal(all.length, 2, 'one invoice per period across two runs');
  const november = all[1];
  const adjustments = november.lines.filter((l: any) => l.type === 'adjustment');
  t.same(
    adjustments.map((l: any) => [l.dimensions, l.quantity, l.amount]),
    [[{ model: 'a' }, 50, 0.5]],
    'only the late record inside the interval is billed, once',
  );
  t.equal(november.amount, 30.5);
  t.equal(november.amount, sumOfLines(november).toNumber(), 'amount = Σ lines');
});
