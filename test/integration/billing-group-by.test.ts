import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { readPdf } from '../fixtures/pdf.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';
import { dayFromEnd, dayIn, monthDays } from '../fixtures/calendar.js';

/**
 * Billing per group (issue 18 §2, docs/design.md §8): a subscription item with `group_by` bills one usage line
 * per group of dimension values, each priced by the product's model on its own — here graduated tiers, where
 * pricing per group and pricing the sum give different amounts — worked to the cent, over usage ingested
 * through the real API and billed by `meterline billing run`; late usage re-priced group by group, once.
 * October, November and December stand for last month, this month and next (test/fixtures/calendar.ts).
 */
const sumOfLines = (inv: { lines: { amount: number }[] }) =>
  inv.lines.reduce((s, l) => s.plus(String(l.amount)), new Decimal(0));

t.test('billing per group: one line per group, tiers per group, late usage per group, to the cent', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Grouped Co' });
  await w.card(a);
  const admin = w.operator.tokens.admin;
  const plan = await w.product('Plan', 10, 'USD');
  const tokensProduct = (
    await w.made(admin, 'POST', '/v1/products', {
      name: 'Tokens',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 1000, unit_price: 0.01 },
        { up_to: null, unit_price: 0.005 },
      ],
    })
  ).id as string;
  const tokens = (
    await w.made(a.tokens.write, 'POST', '/v1/meters', {
      name: 'Tokens',
      unit: 'tokens',
      type: 'counter',
      aggregation: 'sum',
      dimensions: ['model', 'region'],
    })
  ).id as string;
  const open = (
    await w.made(a.tokens.write, 'POST', '/v1/meters', {
      name: 'Open',
      unit: 'calls',
      type: 'counter',
      aggregation: 'sum',
    })
  ).id as string;

  await t.test(
    'group_by is checked: declared keys of the meter, ≤ 4, usage-priced items only, not with a minimum (422 naming the field)',
    async (t) => {
      const bad: [string, Record<string, unknown>, string][] = [
        [
          'an undeclared key',
          { product_id: tokensProduct, meter_id: tokens, group_by: ['model', 'tier'] },
          'items[0].group_by[1]',
        ],
        [
          'a key that is no dimension key',
          { product_id: tokensProduct, meter_id: open, group_by: ['Model!'] },
          'items[0].group_by',
        ],
        [
          'five keys',
          { product_id: tokensProduct, meter_id: open, group_by: ['a', 'b', 'c', 'd', 'e'] },
          'items[0].group_by',
        ],
        ['a key twice', { product_id: tokensProduct, meter_id: open, group_by: ['a', 'a'] }, 'items[0].group_by'],
        ['a flat product', { product_id: plan, group_by: ['model'] }, 'items[0].group_by'],
        [
          'with a minimum',
          { product_id: tokensProduct, meter_id: tokens, group_by: ['model'], minimum_amount: 5 },
          'items[0].minimum_amount',
        ],
      ];
      for (const [what, item, field] of bad) {
        const r = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/subscriptions', { items: [item] });
        t.equal(r.status, 422, what);
        t.ok(
          r.body.errors?.some((e: { field: string }) => e.field === field || e.field.startsWith(`${field}`)),
          `${what}: names ${field} (${JSON.stringify(r.body.errors)})`,
        );
      }
      const anyKey = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: tokensProduct, meter_id: open, group_by: ['customer', 'region'] }],
      });
      t.same(
        anyKey.items,
        [{ product_id: tokensProduct, meter_id: open, group_by: ['customer', 'region'] }],
        'a meter declaring no dimensions takes any valid keys',
      );
      await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${anyKey.id}`, { status: 'canceled' });
    },
  );

  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: tokensProduct, meter_id: tokens, group_by: ['model'] }],
  });
  t.same(
    sub.items[1],
    { product_id: tokensProduct, meter_id: tokens, group_by: ['model'] },
    'group_by is part of the item',
  );
  t.same((await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`)).items, sub.items, 'and reads back');
  await w.backdate(sub.id, dayIn(-1, 5));
  const invoices = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));
  const octoberByModel = async () =>
    Object.fromEntries(
      (
        await w.made(
          a.tokens.read,
          'GET',
          `/v1/meters/${tokens}/usage?start_date=${monthDays(-1).first}&end_date=${monthDays(-1).last}&window=none&group_by=model`,
        )
      ).groups.map((g: any) => [g.dimensions.model ?? '', g.value]),
    );

  await w.usage(a, tokens, [
    { value: 800, timestamp: dayIn(-1, 25, 10), dimensions: { model: 'a', region: 'eu' } },
    { value: 400, timestamp: dayIn(-1, 26, 10), dimensions: { model: 'a', region: 'us' } },
    { value: 900, timestamp: dayIn(-1, 27, 10), dimensions: { model: 'b' } },
    { value: 100, timestamp: dayIn(-1, 28, 10), dimensions: { region: 'eu' } },
  ]);
  await waitUntil(
    async () => JSON.stringify(await octoberByModel()) === JSON.stringify({ '': 100, a: 1200, b: 900 }),
    'October by model',
  );

  const line = (model: string | null, quantity: number, breakdown: string, unit_price: number, amount: number) => ({
    type: 'usage',
    product_id: tokensProduct,
    meter_id: tokens,
    description: `Tokens — model ${model ?? '(none)'} — ${quantity.toLocaleString('en-US')} tokens (graduated: ${breakdown})`,
    quantity,
    unit_price,
    amount,
    dimensions: { model },
  });
  let october: any;
  await t.test('October: one line per model, each through the tiers on its own, to the cent', async (t) => {
    const run = await w.run(dayIn(0, 1, 1));
    t.equal(run.code, 0, run.stderr);
    [october] = await invoices();
    // Per group: (none) 100 × 0.01 = 1.00; a 1,000 × 0.01 + 200 × 0.005 = 11.00; b 900 × 0.01 = 9.00 → 21.00.
    // The sum (2,200) through the same tiers would be 1,000 × 0.01 + 1,200 × 0.005 = 16.00: the lines are per group.
    t.same(october.lines, [
      { type: 'flat', product_id: plan, meter_id: null, description: 'Plan', quantity: 1, unit_price: 10, amount: 10 },
      line(null, 100, '100 × 0.01', 0.01, 1),
      line('a', 1200, '1,000 × 0.01 + 200 × 0.005', 0.005, 11),
      line('b', 900, '900 × 0.01', 0.01, 9),
    ]);
    t.equal(october.amount, 31, '10 + 1 + 11 + 9');
    t.ok(sumOfLines(october).eq(String(october.amount)), 'amount = Σ lines');
    const pdf = await fetch(`${w.api.url}/v1/billing/invoices/${october.id}/download`, {
      headers: { authorization: `Bearer ${a.tokens.read}` },
    });
    t.equal(pdf.status, 200);
    const text = readPdf(Buffer.from(await pdf.arrayBuffer())).text.replace(/\s+/g, ' ');
    for (const shown of [
      'model a',
      '1,200 tokens',
      'Tier 2 (over 1,000) 200 0.005 1.00',
      'model b',
      'model (none)',
      '31.00',
    ])
      t.ok(text.includes(shown), `the PDF shows “${shown}”`);
  });

  await t.test('re-running the same close changes nothing', async (t) => {
    const before = await invoices();
    const again = await w.run(dayIn(0, 1, 1));
    t.same(work(again.json), { invoices: [], payments: [] });
    t.same(await invoices(), before);
  });

  // November so far (the test's "now" is in the current month): a 500, b 1,500.
  const now = new Date(Date.now() - 60_000).toISOString();
  await w.usage(a, tokens, [
    { value: 500, timestamp: now, dimensions: { model: 'a' } },
    { value: 1500, timestamp: now, dimensions: { model: 'b', region: 'eu' } },
  ]);
  // Late October usage after October was invoiced: b +200 (crosses b's tier boundary), a new model c +50.
  await w.usage(a, tokens, [
    { value: 200, timestamp: dayFromEnd(-1, 2, 12), dimensions: { model: 'b' }, id: 'late-b' },
    { value: 50, timestamp: dayFromEnd(-1, 1, 12), dimensions: { model: 'c' }, id: 'late-c' },
  ]);
  await waitUntil(
    async () => JSON.stringify(await octoberByModel()) === JSON.stringify({ '': 100, a: 1200, b: 1100, c: 50 }),
    'late October by model',
  );
  const adjustment = (
    model: string,
    delta: number,
    now: number,
    breakdown: string,
    billed: number,
    unit_price: number,
    amount: number,
  ) => ({
    type: 'adjustment',
    product_id: tokensProduct,
    meter_id: tokens,
    description: `Usage adjustment for ${monthDays(-1).first} to ${monthDays(-1).last} (invoice ${october.id}): Tokens — model ${model} — +${delta} tokens, now ${now.toLocaleString('en-US')} tokens (graduated: ${breakdown}); billed before ${billed}`,
    quantity: delta,
    unit_price,
    amount,
    adjusts_invoice_id: october.id,
    dimensions: { model },
  });
  // b re-priced: 1,000 × 0.01 + 100 × 0.005 = 10.50, billed 9.00 → 1.50; c: 50 × 0.01 = 0.50, billed nothing.
  const lateLines = [
    adjustment('b', 200, 1100, '1,000 × 0.01 + 100 × 0.005', 9, 0.005, 1.5),
    adjustment('c', 50, 50, '50 × 0.01', 0, 0.01, 0.5),
  ];
  const novemberLines = [
    { type: 'flat', product_id: plan, meter_id: null, description: 'Plan', quantity: 1, unit_price: 10, amount: 10 },
    line('a', 500, '500 × 0.01', 0.01, 5),
    line('b', 1500, '1,000 × 0.01 + 500 × 0.005', 0.005, 12.5),
    ...lateLines,
  ];

  await t.test('the upcoming invoice shows November per group and the late groups', async (t) => {
    const up = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.same(up.lines, novemberLines);
    t.equal(up.amount, 29.5);
  });

  await t.test('November carries each late group once; later runs bill nothing more for October', async (t) => {
    const run = await w.run(dayIn(1, 1, 1));
    t.equal(run.code, 0, run.stderr);
    const [, november] = await invoices();
    t.same(november.lines, novemberLines);
    t.equal(november.amount, 29.5, '10 + 5 + 12.5 + 1.5 + 0.5');
    t.ok(sumOfLines(november).eq(String(november.amount)), 'amount = Σ lines');
    t.same(work((await w.run(dayIn(1, 1, 1))).json), { invoices: [], payments: [] }, 're-run: nothing');
    t.equal(await w.charges(november.id), 1, 'charged once');
    const dec = await w.run(dayIn(2, 1, 1));
    t.equal(dec.code, 0, dec.stderr);
    const [, , december] = await invoices();
    t.same(
      december.lines.map((l: any) => [l.type, l.description, l.amount]),
      [
        ['flat', 'Plan', 10],
        ['usage', 'Tokens — 0 tokens (graduated: no tier reached)', 0],
      ],
      'no usage: one line of 0; October and November are billed in full, per group (c only ever had an adjustment line)',
    );
  });
});
