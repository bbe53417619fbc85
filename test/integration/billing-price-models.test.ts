import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { readPdf } from '../fixtures/pdf.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Price models and minimum commitments (docs/design.md §8 Product, Subscription, Invoice), worked to the cent
 * against hand calculations, billed by `meterline billing run` over usage ingested through the real API.
 */
t.test('price models: graduated, volume, package and a minimum commitment, to the cent', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Tiered Co' });
  await w.card(a);
  const admin = w.operator.tokens.admin;
  const product = async (body: Record<string, unknown>) =>
    (await w.made(admin, 'POST', '/v1/products', { currency: 'USD', ...body })).id as string;

  const graduated = await product({
    name: 'API calls',
    pricing: 'tiered',
    tiers_mode: 'graduated',
    tiers: [
      { up_to: 1000, unit_price: 0 },
      { up_to: 10000, unit_price: 0.01, flat_price: 5 },
      { up_to: null, unit_price: 0.008 },
    ],
  });
  const volume = await product({
    name: 'Seats',
    pricing: 'tiered',
    tiers_mode: 'volume',
    tiers: [
      { up_to: 100, unit_price: 1 },
      { up_to: 1000, unit_price: 0.5, flat_price: 10 },
      { up_to: null, unit_price: 0.25 },
    ],
  });
  const pack = await product({ name: 'SMS', pricing: 'package', package_size: 1000, price: 2.5 });
  const committed = await product({ name: 'Storage', pricing: 'metered', price: 0.01 });

  await t.test(
    'the catalog keeps each model exactly; a model’s fields are checked (422 naming the field)',
    async (t) => {
      const got = await w.made(a.tokens.read, 'GET', `/v1/products/${graduated}`);
      t.match(got, { pricing: 'tiered', tiers_mode: 'graduated', price: 0 });
      t.same(got.tiers, [
        { up_to: 1000, unit_price: 0, flat_price: 0 },
        { up_to: 10000, unit_price: 0.01, flat_price: 5 },
        { up_to: null, unit_price: 0.008, flat_price: 0 },
      ]);
      t.match(await w.made(a.tokens.read, 'GET', `/v1/products/${pack}`), {
        pricing: 'package',
        package_size: 1000,
        price: 2.5,
      });
      const tiers = [
        { up_to: 10, unit_price: 1 },
        { up_to: null, unit_price: 0.5 },
      ];
      const bad: [string, Record<string, unknown>, string][] = [
        ['tiered without tiers', { name: 'x', pricing: 'tiered', tiers_mode: 'volume' }, 'tiers'],
        ['tiered without a mode', { name: 'x', pricing: 'tiered', tiers }, 'tiers_mode'],
        ['tiered with a price', { name: 'x', pricing: 'tiered', tiers_mode: 'volume', tiers, price: 1 }, 'price'],
        [
          'descending tiers',
          {
            name: 'x',
            pricing: 'tiered',
            tiers_mode: 'volume',
            tiers: [
              { up_to: 10, unit_price: 1 },
              { up_to: 5, unit_price: 1 },
              { up_to: null, unit_price: 1 },
            ],
          },
          'tiers[1].up_to',
        ],
        [
          'last tier bounded',
          { name: 'x', pricing: 'tiered', tiers_mode: 'volume', tiers: [{ up_to: 10, unit_price: 1 }] },
          'tiers[0].up_to',
        ],
        [
          'unbounded tier before the last',
          {
            name: 'x',
            pricing: 'tiered',
            tiers_mode: 'graduated',
            tiers: [
              { up_to: null, unit_price: 1 },
              { up_to: null, unit_price: 1 },
            ],
          },
          'tiers[0].up_to',
        ],
        [
          'ten decimals in a tier',
          { name: 'x', pricing: 'tiered', tiers_mode: 'graduated', tiers: [{ up_to: null, unit_price: 0.0000000001 }] },
          'tiers[0].unit_price',
        ],
        ['package without a size', { name: 'x', pricing: 'package', price: 1 }, 'package_size'],
        ['package size 0', { name: 'x', pricing: 'package', price: 1, package_size: 0 }, 'package_size'],
        ['tiers on a flat product', { name: 'x', price: 1, tiers }, 'tiers'],
      ];
      for (const [what, body, field] of bad) {
        const r = await callJson(w.api.url, admin, 'POST', '/v1/products', { currency: 'USD', ...body });
        t.equal(r.status, 422, what);
        t.ok(
          r.body.errors?.some((e: { field: string }) => e.field === field),
          `${what}: names ${field} (${JSON.stringify(r.body.errors)})`,
        );
      }
    },
  );

  const m = {
    calls: await w.meter(a, 'Calls', 'requests', 'counter', 'sum'),
    seats: await w.meter(a, 'Seats', 'seats', 'gauge', 'max'),
    seats2: await w.meter(a, 'Seats B', 'seats', 'gauge', 'max'),
    sms: await w.meter(a, 'SMS', 'messages', 'counter', 'sum'),
    gb: await w.meter(a, 'Storage', 'GB', 'counter', 'sum'),
  };
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [
      { product_id: graduated, meter_id: m.calls },
      { product_id: volume, meter_id: m.seats },
      { product_id: pack, meter_id: m.sms },
      { product_id: committed, meter_id: m.gb, minimum_amount: 25 },
    ],
  });
  t.same(
    sub.items[3],
    { product_id: committed, meter_id: m.gb, minimum_amount: 25 },
    'the minimum is part of the item',
  );
  const sub2 = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: volume, meter_id: m.seats2 }],
  });
  await w.backdate(sub.id, '2026-10-05T00:00:00Z');
  await w.backdate(sub2.id, '2026-10-05T00:00:00Z');

  await t.test('a minimum on a flat item → 422', async (t) => {
    const flat = await product({ name: 'Plan', price: 10 });
    const r = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: flat, minimum_amount: 5 }],
    });
    t.equal(r.status, 422);
    t.equal(r.body.errors[0].field, 'items[0].minimum_amount');
  });

  await w.usage(a, m.calls, [
    { value: 10000, timestamp: '2026-10-25T00:00:00Z' },
    { value: 2345.5, timestamp: '2026-10-31T23:59:59Z' },
  ]);
  await w.usage(a, m.seats, [{ value: 100, timestamp: '2026-10-26T00:00:00Z' }]);
  await w.usage(a, m.seats2, [{ value: 101, timestamp: '2026-10-26T00:00:00Z' }]);
  await w.usage(a, m.sms, [{ value: 2001, timestamp: '2026-10-27T00:00:00Z' }]);
  await w.usage(a, m.gb, [{ value: 1234, timestamp: '2026-10-28T00:00:00Z' }]);

  const invoicesOf = async (subscriptionId: string) =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.filter(
      (i: any) => i.subscription_id === subscriptionId,
    );

  await t.test('October, to the cent', async (t) => {
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
    const [oct] = await invoicesOf(sub.id);
    // Graduated 12,345.5 calls: 1,000 × 0 + 9,000 × 0.01 + 5 flat + 2,345.5 × 0.008 = 0 + 90 + 5 + 18.764 = 113.764 → 113.76.
    // Volume 100 seats (the boundary, inclusive): all in tier 1, 100 × 1 = 100.
    // Package 2,001 messages: 3 packages of 1,000 × 2.5 = 7.50.
    // Storage 1,234 GB × 0.01 = 12.34, short of the 25 minimum: a true-up of 12.66.
    t.same(oct.lines, [
      {
        type: 'usage',
        product_id: graduated,
        meter_id: m.calls,
        description: 'API calls — 12,345.5 requests (graduated: 1,000 × 0 + 9,000 × 0.01 + 5 flat + 2,345.5 × 0.008)',
        quantity: 12345.5,
        unit_price: 0.008,
        amount: 113.76,
      },
      {
        type: 'usage',
        product_id: volume,
        meter_id: m.seats,
        description: 'Seats — 100 seats (volume (tier 1, up to 100): 100 × 1)',
        quantity: 100,
        unit_price: 1,
        amount: 100,
      },
      {
        type: 'usage',
        product_id: pack,
        meter_id: m.sms,
        description: 'SMS — 2,001 messages (3 × package of 1,000 at 2.5)',
        quantity: 2001,
        unit_price: 2.5,
        amount: 7.5,
      },
      {
        type: 'usage',
        product_id: committed,
        meter_id: m.gb,
        description: 'Storage — 1,234 GB',
        quantity: 1234,
        unit_price: 0.01,
        amount: 12.34,
      },
      {
        type: 'minimum_commitment',
        product_id: committed,
        meter_id: m.gb,
        description: 'Storage — minimum commitment 25, usage 12.34: true-up',
        quantity: 1,
        unit_price: 12.66,
        amount: 12.66,
      },
    ]);
    t.equal(oct.amount, 246.26, '113.76 + 100 + 7.5 + 12.34 + 12.66');
    t.equal(oct.status, 'paid');
    // One seat over the boundary: every seat at tier 2, 101 × 0.5 + 10 flat = 60.50.
    const [oct2] = await invoicesOf(sub2.id);
    t.same(
      oct2.lines.map((l: any) => [l.description, l.amount]),
      [['Seats — 101 seats (volume (tier 2, up to 1,000): 101 × 0.5 + 10 flat)', 60.5]],
    );
    t.equal(oct2.amount, 60.5);

    const pdf = await fetch(`${w.api.url}/v1/billing/invoices/${oct.id}/download`, {
      headers: { authorization: `Bearer ${a.tokens.read}` },
    });
    t.equal(pdf.status, 200);
    const text = readPdf(Buffer.from(await pdf.arrayBuffer())).text.replace(/\s+/g, ' ');
    for (const shown of [
      // Tier sub-lines: quantity, unit price, amount (issue 48).
      'Tier 2 (over 1,000 up to 10,000) 9,000 0.01 90.00',
      'Tier 2 flat fee 1 5.00 5.00',
      'Tier 3 (over 10,000) 2,345.5 0.008 18.764',
      'Packages of 1,000',
      'minimum commitment 25',
      '12.66',
      '246.26',
    ])
      t.ok(text.includes(shown), `the PDF shows “${shown}”`);
  });

  await t.test('amount = Σ lines on every invoice; re-running the billing run changes nothing', async (t) => {
    const before = await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    for (const inv of before.data) {
      const sum = inv.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
      t.ok(sum.eq(String(inv.amount)), `${inv.id}: amount = Σ lines`);
    }
    const again = await w.run('2026-11-01T01:00:00Z');
    t.same(work(again.json), { invoices: [], payments: [] });
    t.same(await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100'), before, 'every invoice as it was');
  });

  await t.test('the upcoming invoice prices the current period the same way, breakdown included', async (t) => {
    const now = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: graduated, meter_id: m.calls }],
    });
    await w.usage(a, m.calls, [{ value: 1500, timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    const up = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${now.id}`);
    // This month's calls so far include the 1,500 just sent: at least tier 2 is reached.
    const line = up.lines[0];
    t.equal(line.type, 'usage');
    t.match(line.description, /^API calls — [\d,.]+ requests \(graduated: 1,000 × 0 \+ [\d,.]+ × 0\.01 \+ 5 flat/);
    const q = new Decimal(String(line.quantity));
    const expected = Decimal.min(q, 10000)
      .minus(1000)
      .times('0.01')
      .plus(5)
      .plus(Decimal.max(q.minus(10000), 0).times('0.008'))
      .toDecimalPlaces(2);
    t.ok(expected.eq(String(line.amount)), `${line.quantity} calls → ${expected}`);
  });
});
