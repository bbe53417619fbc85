import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { readPdf } from '../fixtures/pdf.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';
import { dayFromEnd, dayIn, monthDays } from '../fixtures/calendar.js';

/**
 * Per-dimension prices (issue 46, docs/billing.md "Per-dimension prices"): one meter priced by the value of its
 * records' `model` dimension — large per token, small through graduated tiers, batch per package — one invoice
 * line per value, a value with no price (and records without the dimension) billed on a line marked unpriced,
 * tax per line; worked to the cent over usage ingested through the real API and billed by `meterline billing
 * run`; late usage re-priced per value at that period's prices; the upcoming invoice shows the same lines.
 * October, November and December stand for last month, this month and next (test/fixtures/calendar.ts).
 */
const sumOfLines = (inv: { lines: { amount: number }[] }) =>
  inv.lines.reduce((s, l) => s.plus(String(l.amount)), new Decimal(0));

t.test(
  'per-dimension prices: a line per value at its own model, unpriced values shown, late usage, to the cent',
  async (t) => {
    const w = await billingWorld(t);
    const admin = w.operator.tokens.admin;
    const a = await createTestAccount(w.api.infra, { name: 'Model Co' });
    await w.card(a);
    const vat = (await w.made(admin, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false })).id;
    const plan = await w.product('Plan', 10, 'USD');
    const tokensProduct = (
      await w.made(admin, 'POST', '/v1/products', {
        name: 'Tokens',
        currency: 'USD',
        pricing: 'metered',
        price: 0.002,
        tax_rate_ids: [vat],
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
    const prices = [
      { value: 'large', price: { pricing: 'metered', price: 0.03 } },
      {
        value: 'small',
        price: {
          pricing: 'tiered',
          tiers_mode: 'graduated',
          tiers: [
            { up_to: 1000, unit_price: 0.002 },
            { up_to: null, unit_price: 0.001 },
          ],
        },
      },
      { value: 'batch', price: { pricing: 'package', price: 0.5, package_size: 100 } },
    ];

    await t.test('the prices are checked: 422 naming the field', async (t) => {
      const item = (extra: Record<string, unknown>) => ({ product_id: tokensProduct, meter_id: tokens, ...extra });
      const bad: [string, Record<string, unknown>, string][] = [
        ['prices without a dimension', item({ prices }), 'items[0].dimension'],
        ['a dimension without prices', item({ dimension: 'model' }), 'items[0].prices'],
        ['default_price alone', item({ default_price: { pricing: 'metered', price: 1 } }), 'items[0].default_price'],
        ['an undeclared dimension', item({ dimension: 'tier', prices }), 'items[0].dimension'],
        ['no dimension key', item({ dimension: 'Model!', prices }), 'items[0].dimension'],
        [
          'a value twice',
          item({ dimension: 'model', prices: [prices[0], { ...prices[0], price: { pricing: 'metered', price: 1 } }] }),
          'items[0].prices[1].value',
        ],
        [
          'tiered without tiers',
          item({ dimension: 'model', prices: [{ value: 'x', price: { pricing: 'tiered', tiers_mode: 'volume' } }] }),
          'items[0].prices[0].price.tiers',
        ],
        [
          'a price with 10 decimals',
          item({ dimension: 'model', prices: [{ value: 'x', price: { pricing: 'metered', price: 0.0000000001 } }] }),
          'items[0].prices[0].price.price',
        ],
        [
          'a package of 0',
          item({
            dimension: 'model',
            prices: [{ value: 'x', price: { pricing: 'package', price: 1, package_size: 0 } }],
          }),
          'items[0].prices[0].price.package_size',
        ],
        ['with group_by', item({ dimension: 'model', prices, group_by: ['region'] }), 'items[0].group_by'],
        ['with a minimum', item({ dimension: 'model', prices, minimum_amount: 5 }), 'items[0].minimum_amount'],
        ['on a flat product', { product_id: plan, dimension: 'model', prices }, 'items[0].dimension'],
      ];
      for (const [what, it, field] of bad) {
        const r = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/subscriptions', { items: [it] });
        t.equal(r.status, 422, what);
        t.equal(r.body.code, 'validation_failed', `${what}: a validation problem`);
        t.ok(
          r.body.errors?.some((e: { field: string }) => e.field === field),
          `${what}: names ${field} (${JSON.stringify(r.body.errors)})`,
        );
      }
      t.equal(
        (await w.made(a.tokens.read, 'GET', '/v1/subscriptions?per_page=100')).data.length,
        0,
        'nothing was written',
      );
    });

    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: tokensProduct, meter_id: tokens, dimension: 'model', prices }],
    });
    t.same(
      sub.items[1],
      {
        product_id: tokensProduct,
        meter_id: tokens,
        dimension: 'model',
        // As a product shows its tiers: every flat_price (0 when not given).
        prices: prices.map((p) =>
          p.price.pricing === 'tiered'
            ? { ...p, price: { ...p.price, tiers: p.price.tiers!.map((x) => ({ ...x, flat_price: 0 })) } }
            : p,
        ),
        default_price: null,
      },
      'the item shows its prices, digit for digit',
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
      { value: 1000, timestamp: dayIn(-1, 20, 10), dimensions: { model: 'large', region: 'eu' } },
      { value: 234, timestamp: dayIn(-1, 21, 10), dimensions: { model: 'large', region: 'us' } },
      { value: 1500, timestamp: dayIn(-1, 22, 10), dimensions: { model: 'small' } },
      { value: 250, timestamp: dayIn(-1, 23, 10), dimensions: { model: 'batch' } },
      { value: 400, timestamp: dayIn(-1, 24, 10), dimensions: { model: 'tiny' } },
      { value: 100, timestamp: dayIn(-1, 25, 10), dimensions: { region: 'eu' } },
    ]);
    await waitUntil(
      async () =>
        JSON.stringify(await octoberByModel()) ===
        JSON.stringify({ '': 100, batch: 250, large: 1234, small: 1500, tiny: 400 }),
      'October by model',
    );

    const line = (model: string | null, quantity: number, rest: string, unit_price: number, amount: number) => ({
      type: 'usage',
      product_id: tokensProduct,
      meter_id: tokens,
      description: `Tokens — model ${model ?? '(none)'} — ${quantity.toLocaleString('en-US')} tokens${rest}`,
      quantity,
      unit_price,
      amount,
      dimensions: { model },
    });
    let october: any;
    await t.test('October: one line per model at its own price, unpriced ones shown at 0, to the cent', async (t) => {
      const run = await w.run(dayIn(0, 1, 1));
      t.equal(run.code, 0, run.stderr);
      [october] = await invoices();
      // large 1,234 × 0.03 = 37.02; small 1,000 × 0.002 + 500 × 0.001 = 2.50; batch ⌈250 / 100⌉ = 3 × 0.50 = 1.50;
      // tiny (no price) and records without a model: unpriced, 0. Plan 10.00. Subtotal 51.02.
      // VAT 20 % per line: 7.404 → 7.40, 0.50, 0.30 → 8.20. Total 59.22.
      const usageLines = october.lines.filter((l: any) => l.type !== 'tax');
      t.same(usageLines, [
        {
          type: 'flat',
          product_id: plan,
          meter_id: null,
          description: 'Plan',
          quantity: 1,
          unit_price: 10,
          amount: 10,
        },
        line(null, 100, ' — unpriced (no price for this value)', 0, 0),
        line('batch', 250, ' (3 × package of 100 at 0.5)', 0.5, 1.5),
        line('large', 1234, '', 0.03, 37.02),
        line('small', 1500, ' (graduated: 1,000 × 0.002 + 500 × 0.001)', 0.001, 2.5),
        line('tiny', 400, ' — unpriced (no price for this value)', 0, 0),
      ]);
      t.match(october, { subtotal: 51.02, tax: 8.2, amount: 59.22 }, 'October to the cent');
      t.same(
        october.lines.filter((l: any) => l.type === 'tax').map((l: any) => l.tax_amount),
        [8.2],
        'one VAT line of 8.20',
      );
      t.ok(sumOfLines(october).eq(String(october.amount)), 'amount = Σ lines');
      const pdf = await fetch(`${w.api.url}/v1/billing/invoices/${october.id}/download`, {
        headers: { authorization: `Bearer ${a.tokens.read}` },
      });
      t.equal(pdf.status, 200);
      const text = readPdf(Buffer.from(await pdf.arrayBuffer())).text.replace(/\s+/g, ' ');
      for (const shown of ['model large', '1,234 tokens', 'model small', 'model tiny', 'unpriced', '37.02', '59.22'])
        t.ok(text.includes(shown), `the PDF shows “${shown}”`);
    });

    await t.test('re-running the same close changes nothing', async (t) => {
      const before = await invoices();
      const again = await w.run(dayIn(0, 1, 1));
      t.same(work(again.json), { invoices: [], payments: [] });
      t.same(await invoices(), before);
    });

    // November so far: large 100. Late October after October was invoiced: small +600 (its tiers go on from 1,500),
    // a value first seen late (batch2, unpriced) and large +10.
    const now = new Date(Date.now() - 60_000).toISOString();
    await w.usage(a, tokens, [{ value: 100, timestamp: now, dimensions: { model: 'large' } }]);
    await w.usage(a, tokens, [
      { value: 600, timestamp: dayFromEnd(-1, 2, 12), dimensions: { model: 'small' }, id: 'late-small' },
      { value: 10, timestamp: dayFromEnd(-1, 1, 12), dimensions: { model: 'large' }, id: 'late-large' },
      { value: 5, timestamp: dayFromEnd(-1, 1, 13), dimensions: { model: 'new' }, id: 'late-new' },
    ]);
    await waitUntil(
      async () =>
        JSON.stringify(await octoberByModel()) ===
        JSON.stringify({ '': 100, batch: 250, large: 1244, new: 5, small: 2100, tiny: 400 }),
      'late October by model',
    );
    const adjustment = (
      model: string,
      delta: number,
      now: number,
      rest: string,
      billed: number,
      unit_price: number,
      amount: number,
    ) => ({
      type: 'adjustment',
      product_id: tokensProduct,
      meter_id: tokens,
      description: `Usage adjustment for ${monthDays(-1).first} to ${monthDays(-1).last} (invoice ${october.id}): Tokens — model ${model} — +${delta} tokens, now ${now.toLocaleString('en-US')} tokens${rest}; billed before ${billed}`,
      quantity: delta,
      unit_price,
      amount,
      adjusts_invoice_id: october.id,
      dimensions: { model },
    });
    // large: 1,244 × 0.03 = 37.32, billed 37.02 → 0.30; new: unpriced, 0 (shown, quantity 5);
    // small: 1,000 × 0.002 + 1,100 × 0.001 = 3.10, billed 2.50 → 0.60.
    const novemberCharges = [
      { type: 'flat', product_id: plan, meter_id: null, description: 'Plan', quantity: 1, unit_price: 10, amount: 10 },
      line('large', 100, '', 0.03, 3),
      adjustment('large', 10, 1244, '', 37.02, 0.03, 0.3),
      adjustment('new', 5, 5, '', 0, 0, 0),
      adjustment('small', 600, 2100, ' (graduated: 1,000 × 0.002 + 1,100 × 0.001)', 2.5, 0.001, 0.6),
    ];
    // VAT: 3.00 → 0.60, 0.30 → 0.06, 0.60 → 0.12: 0.78. 13.90 + 0.78 = 14.68.
    let upcoming: any;
    await t.test('the upcoming invoice shows November per value and the late values', async (t) => {
      upcoming = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
      t.same(
        upcoming.lines.filter((l: any) => l.type !== 'tax'),
        novemberCharges,
      );
      t.match(upcoming, { subtotal: 13.9, tax: 0.78, amount: 14.68 });
    });

    await t.test('November carries each late value once, at October’s prices', async (t) => {
      const run = await w.run(dayIn(1, 1, 1));
      t.equal(run.code, 0, run.stderr);
      const [, november] = await invoices();
      t.same(november.lines, upcoming.lines, 'the lines the upcoming invoice showed');
      t.match(november, { subtotal: 13.9, tax: 0.78, amount: 14.68 });
      t.ok(sumOfLines(november).eq(String(november.amount)), 'amount = Σ lines');
      t.same(work((await w.run(dayIn(1, 1, 1))).json), { invoices: [], payments: [] }, 're-run: nothing');
    });
  },
);

t.test('a plan version carries per-dimension prices; a subscription to it gets them', async (t) => {
  const w = await billingWorld(t);
  const admin = w.operator.tokens.admin;
  const a = await createTestAccount(w.api.infra, { name: 'Plan Co' });
  const product = (
    await w.made(admin, 'POST', '/v1/products', { name: 'Tokens', currency: 'USD', pricing: 'metered', price: 1 })
  ).id as string;
  const meter = (
    await w.made(admin, 'POST', '/v1/meters', {
      name: 'Tokens',
      unit: 'tokens',
      aggregation: 'sum',
      scope: 'deployment',
      dimensions: ['model'],
    })
  ).id as string;
  const item = {
    product_id: product,
    meter_id: meter,
    dimension: 'model',
    prices: [{ value: 'large', price: { pricing: 'metered', price: 0.03 } }],
    default_price: { pricing: 'package', price: 2.5, package_size: 1000 },
  };
  const plan = await w.made(admin, 'POST', '/v1/plans', {
    name: 'AI',
    currency: 'USD',
    interval: 'month',
    items: [item],
  });
  t.same(plan.items, [item], 'the version shows the prices as given');
  const bad = await callJson(w.api.url, admin, 'POST', '/v1/plans', {
    name: 'Bad',
    currency: 'USD',
    interval: 'month',
    items: [{ ...item, dimension: 'region' }],
  });
  t.equal(bad.status, 422, 'an undeclared dimension');
  t.ok(
    bad.body.errors?.some((e: { field: string }) => e.field === 'items[0].dimension'),
    'names items[0].dimension',
  );
  const sub = await w.made(admin, 'POST', '/v1/subscriptions', { customer_id: a.customerId, plan_id: plan.id });
  t.same(sub.items, [item], 'the subscription’s item carries the same prices');
});

t.test('per-dimension prices with a default price: other values and records without the dimension', async (t) => {
  const w = await billingWorld(t);
  const admin = w.operator.tokens.admin;
  const a = await createTestAccount(w.api.infra, { name: 'Region Co' });
  await w.card(a);
  const requestsProduct = (
    await w.made(admin, 'POST', '/v1/products', { name: 'Requests', currency: 'EUR', pricing: 'metered', price: 1 })
  ).id as string;
  const requests = (
    await w.made(a.tokens.write, 'POST', '/v1/meters', {
      name: 'Requests',
      unit: 'requests',
      type: 'counter',
      aggregation: 'sum',
    })
  ).id as string;
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [
      {
        product_id: requestsProduct,
        meter_id: requests,
        dimension: 'region',
        prices: [{ value: 'eu', price: { pricing: 'metered', price: 0.0015 } }],
        default_price: {
          pricing: 'tiered',
          tiers_mode: 'volume',
          tiers: [
            { up_to: 1000, unit_price: 0.002 },
            { up_to: null, unit_price: 0.001, flat_price: 1 },
          ],
        },
      },
    ],
  });
  await w.backdate(sub.id, dayIn(-1, 5));
  await w.usage(a, requests, [
    { value: 3333, timestamp: dayIn(-1, 20, 10), dimensions: { region: 'eu' } },
    { value: 1500, timestamp: dayIn(-1, 21, 10), dimensions: { region: 'us' } },
    { value: 500, timestamp: dayIn(-1, 22, 10) },
  ]);
  await waitUntil(
    async () =>
      (
        await w.made(
          a.tokens.read,
          'GET',
          `/v1/meters/${requests}/usage?start_date=${monthDays(-1).first}&end_date=${monthDays(-1).last}&window=none`,
        )
      ).value === 5333,
    'October usage',
  );
  const run = await w.run(dayIn(0, 1, 1));
  t.equal(run.code, 0, run.stderr);
  const october = (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
    (i: any) => i.subscription_id === sub.id,
  );
  // (none) 500 at the default (volume, tier 1): 1.00; eu 3,333 × 0.0015 = 4.9995 → 5.00;
  // us 1,500 at the default (volume, tier 2): 1,500 × 0.001 + 1 = 2.50. Total 8.50 EUR.
  t.same(
    october.lines.map((l: any) => [l.description, l.quantity, l.amount]),
    [
      ['Requests — region (none) — 500 requests (volume (tier 1, up to 1,000): 500 × 0.002)', 500, 1],
      ['Requests — region eu — 3,333 requests', 3333, 5],
      ['Requests — region us — 1,500 requests (volume (tier 2, above 1,000): 1,500 × 0.001 + 1 flat)', 1500, 2.5],
    ],
  );
  t.match(october, { currency: 'EUR', amount: 8.5 });
});
