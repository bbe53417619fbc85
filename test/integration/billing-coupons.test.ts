import t, { type Test } from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Coupons and discounts (issue 29 item 4, docs/coupons.md) against the real api, consumer, billing engine, ClickHouse
 * and Postgres: the worked example to the cent — a tiered product taxed 20 %, a flat plan, 5.00 of prepaid credit,
 * a 10.00 `once` coupon then a 25 % `forever` one, late records after two closes — on a test clock, each issued
 * invoice equal to the upcoming invoice the moment before its period ended. Then bad input, isolation, and two
 * redemptions of a coupon's last slot at once.
 */
const sum = (xs: (number | string)[]) => xs.reduce<Decimal>((s, x) => s.plus(String(x)), new Decimal(0)).toNumber();
/** Lines as [type, amount], discount lines named by product so the order of equal types does not matter. */
const shape = (lines: any[], names: Record<string, string>) =>
  lines.map((l) =>
    [l.type, l.type === 'discount' ? (names[l.product_id] ?? null) : undefined, l.amount].filter(
      (x) => x !== undefined,
    ),
  );
const sorted = (lines: any[]) =>
  [...lines].sort((x, y) =>
    x.type === y.type && x.type === 'discount' ? String(x.product_id).localeCompare(String(y.product_id)) : 0,
  );

t.test('coupons', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const pg = w.api.infra.pg;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const vat = (await w.made(ADMIN, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false })).id;
  const plan = await w.product('Plan', 10, 'USD');
  const tiered = (
    await w.made(ADMIN, 'POST', '/v1/products', {
      name: 'API calls',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 1000, unit_price: 0.01 },
        { up_to: null, unit_price: 0.005 },
      ],
      tax_rate_ids: [vat],
    })
  ).id;
  const names = { [plan]: 'Plan', [tiered]: 'API calls' };
  const coupon = async (body: Record<string, unknown>) => w.made(ADMIN, 'POST', '/v1/coupons', body);

  await t.test('create, get, list: admin only; 201 with the exact terms', async (t) => {
    const r = await call(ADMIN, 'POST', '/v1/coupons', {
      name: 'SPRING',
      percent_off: 12.5,
      duration: 'repeating',
      duration_in_periods: 3,
      max_redemptions: 100,
      expires_at: '2030-01-01T00:00:00Z',
    });
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.equal(r.headers.get('location'), `/v1/coupons/${r.body.id}`);
    t.match(r.body, {
      id: /^coupon_[0-9A-Za-z]{22}$/,
      name: 'SPRING',
      percent_off: 12.5,
      amount_off: null,
      currency: null,
      duration: 'repeating',
      duration_in_periods: 3,
      max_redemptions: 100,
      times_redeemed: 0,
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    const off = await coupon({ name: 'TEN', amount_off: 10, currency: 'usd', duration: 'once' });
    t.match(off, { amount_off: 10, currency: 'USD', percent_off: null, duration_in_periods: null });
    t.same(await w.made(ADMIN, 'GET', `/v1/coupons/${r.body.id}`), r.body, 'read back unchanged');
    const list = await w.made(ADMIN, 'GET', '/v1/coupons?per_page=100');
    t.same(
      list.data.slice(0, 2).map((c: any) => c.id),
      [off.id, r.body.id],
      'newest first',
    );
    t.equal((await call(ADMIN, 'GET', '/v1/coupons/coupon_nope')).status, 404);
    const customer = await createTestAccount(w.api.infra, { name: 'Curious Co' });
    for (const [method, path] of [
      ['GET', '/v1/coupons'],
      ['GET', `/v1/coupons/${r.body.id}`],
      ['POST', '/v1/coupons'],
    ] as const) {
      const body = method === 'POST' ? { name: 'x', percent_off: 50, duration: 'once' } : undefined;
      const res = await call(customer.tokens.write, method, path, body);
      t.equal(res.status, 403, `${method} ${path}: a customer's token is refused`);
      t.equal(res.body.code, 'insufficient_scope');
    }
  });

  await t.test('bad input: 422 naming the field', async (t) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x', percent_off: 0, duration: 'once' }, 'percent_off'],
      [{ name: 'x', percent_off: 100.5, duration: 'once' }, 'percent_off'],
      [{ name: 'x', percent_off: 10.12345, duration: 'once' }, 'percent_off'],
      [{ name: 'x', percent_off: 10, amount_off: 5, currency: 'USD', duration: 'once' }, 'percent_off'],
      [{ name: 'x', duration: 'once' }, 'percent_off'],
      [{ name: 'x', amount_off: 5, duration: 'once' }, 'currency'],
      [{ name: 'x', amount_off: 5.001, currency: 'USD', duration: 'once' }, 'amount_off'],
      [{ name: 'x', amount_off: 5.5, currency: 'JPY', duration: 'once' }, 'amount_off'],
      [{ name: 'x', amount_off: 5, currency: 'XXQ', duration: 'once' }, 'currency'],
      [{ name: 'x', percent_off: 5, currency: 'USD', duration: 'once' }, 'currency'],
      [{ name: 'x', percent_off: 5, duration: 'repeating' }, 'duration_in_periods'],
      [{ name: 'x', percent_off: 5, duration: 'forever', duration_in_periods: 2 }, 'duration_in_periods'],
      [{ name: 'x', percent_off: 5, duration: 'weekly' }, 'duration'],
      [{ name: 'x', percent_off: 5, duration: 'once', max_redemptions: 0 }, 'max_redemptions'],
      [{ name: 'x', percent_off: 5, duration: 'once', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: '   ', percent_off: 5, duration: 'once' }, 'name'],
      [{ name: 'x', percent_off: 5, duration: 'once', color: 'red' }, 'color'],
    ];
    for (const [body, field] of cases) {
      const r = await call(ADMIN, 'POST', '/v1/coupons', body);
      t.equal(r.status, 422, `${JSON.stringify(body)} → 422`);
      t.ok(
        (r.body.errors ?? []).some((e: any) => e.field === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const before = Number((await pg.query(`SELECT count(*) AS n FROM coupons WHERE name = 'x'`)).rows[0].n);
    t.equal(before, 0, 'nothing written');
  });

  await t.test(
    'the worked example: once 10.00 then 25 % forever, credit, tax, late records — to the cent',
    async (t) => {
      const a = await createTestAccount(w.api.infra, { name: 'Coupon Co' });
      const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
      await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
      const advance = async (frozen_time: string) => {
        const r = await call(ADMIN, 'POST', `/v1/test_clocks/${clock}/advance`, { frozen_time });
        t.equal(r.status, 200, `advance to ${frozen_time}: ${JSON.stringify(r.body).slice(0, 300)}`);
      };
      await w.card(a);
      const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
      await w.made(ADMIN, 'POST', '/v1/billing/credits', {
        account_id: a.accountId,
        currency: 'USD',
        amount: 5,
        description: 'Welcome credit',
      });
      const once = await coupon({ name: 'WELCOME10', amount_off: 10, currency: 'USD', duration: 'once' });
      const forever = await coupon({ name: 'LOYAL25', percent_off: 25, duration: 'forever' });
      const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: a.customerId,
        items: [{ product_id: plan }, { product_id: tiered, meter_id: calls }],
        coupon_id: once.id,
      });
      t.match(sub.discount, {
        coupon: { id: once.id, amount_off: 10, currency: 'USD', duration: 'once' },
        start: '2026-10-01T00:00:00.000Z',
      });
      t.notOk('times_redeemed' in sub.discount.coupon, "the operator's redemption count is not shown with it");
      t.equal((await w.made(ADMIN, 'GET', `/v1/coupons/${once.id}`)).times_redeemed, 1, 'redeemed once');
      t.same(
        (await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`)).discount,
        sub.discount,
        'the customer sees its discount on its subscription',
      );
      const usageIs = (from: string, to: string, total: number) =>
        waitUntil(
          async () =>
            (
              await w.made(
                a.tokens.read,
                'GET',
                `/v1/meters/${calls}/usage?start_date=${from}&end_date=${to}&window=none`,
              )
            ).value === total,
          `${from}… at ${total}`,
        );
      const upcoming = () => w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
      const invoiceOf = async (period: string) =>
        (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
          (i: any) => i.subscription_id === sub.id && i.period_start === period,
        );
      const same = (t: Test, issued: any, up: any) => {
        for (const k of ['subtotal', 'tax', 'amount', 'period_start', 'period_end'])
          t.equal(issued[k], up[k], `${k} as upcoming`);
        const strip = (ls: any[]) =>
          sorted(ls).map((l) => ({ ...l, description: l.description.replace(/ cred_\w+/g, '') }));
        t.same(strip(issued.lines), strip(up.lines), 'the lines the upcoming invoice showed');
      };

      // October: 1,500 calls = 1,000 × 0.01 + 500 × 0.005 = 12.50; Plan 10.00; charges 22.50.
      await w.usage(a, calls, [{ value: 1500, timestamp: '2026-10-02T00:00:00Z' }]);
      await usageIs('2026-10-01', '2026-10-31', 1500);
      await advance('2026-10-31T23:00:00Z');
      const upOctober = await upcoming();
      await advance('2026-11-01T02:00:00Z');
      const october = await invoiceOf('2026-10-01');
      // WELCOME10 takes 10.00, split by charges: Plan 10/22.5 → 4.44, API calls 12.5/22.5 → 5.56 (the odd cent to
      // the larger remainder). VAT 20 % on API calls: 12.50 → 2.50, −5.56 → −1.11: 1.39. 22.50 − 10 + 1.39 = 13.89,
      // − 5.00 of credit = 8.89.
      t.match(october, { status: 'paid', subtotal: 12.5, tax: 1.39, amount: 8.89 }, 'October to the cent');
      t.same(
        shape(sorted(october.lines), names).sort(),
        [
          ['credit', -5],
          ['discount', 'API calls', -5.56],
          ['discount', 'Plan', -4.44],
          ['flat', 10],
          ['tax', 1.39],
          ['usage', 12.5],
        ],
        'October: a discount line per product, tax on the discounted amount, credit after',
      );
      t.equal(
        october.lines.findIndex((l: any) => l.type === 'discount') <
          october.lines.findIndex((l: any) => l.type === 'tax'),
        true,
        'discount before tax',
      );
      t.match(
        october.lines.find((l: any) => l.type === 'discount'),
        {
          coupon_id: once.id,
          description: 'Discount WELCOME10 (10.00 USD off)',
        },
      );
      t.equal(october.lines.find((l: any) => l.type === 'tax').description, 'VAT 20 % on 6.94');
      same(t, october, upOctober);

      // November: the operator replaces the coupon; a late October record (300 calls) after October closed.
      const patched = await w.made(ADMIN, 'PATCH', `/v1/subscriptions/${sub.id}`, { coupon_id: forever.id });
      t.match(patched.discount, { coupon: { id: forever.id, percent_off: 25 }, start: '2026-11-01T00:00:00.000Z' });
      await w.usage(a, calls, [
        { value: 300, timestamp: '2026-10-20T00:00:00Z', id: 'late-october' },
        { value: 2000, timestamp: '2026-11-03T00:00:00Z' },
      ]);
      await usageIs('2026-10-01', '2026-10-31', 1800);
      await usageIs('2026-11-01', '2026-11-30', 2000);
      await advance('2026-11-30T23:00:00Z');
      const upNovember = await upcoming();
      await advance('2026-12-01T02:00:00Z');
      const november = await invoiceOf('2026-11-01');
      // Charges: Plan 10 + 2,000 calls (10 + 5.00) = 25.00; LOYAL25 6.25 (Plan 2.50, API calls 3.75). October's
      // 1,800 calls re-priced 14.00: adjustment +1.50; its coupon (WELCOME10) on 24.00 is still 10.00, all given: no
      // discount on it. VAT: 3.00 + 0.30 − 0.75 = 2.55. 25 + 1.50 − 6.25 + 2.55 = 22.80 (the credit is spent).
      t.match(november, { subtotal: 20.25, tax: 2.55, amount: 22.8 }, 'November to the cent');
      t.same(
        shape(sorted(november.lines), names).sort(),
        [
          ['adjustment', 1.5],
          ['discount', 'API calls', -3.75],
          ['discount', 'Plan', -2.5],
          ['flat', 10],
          ['tax', 2.55],
          ['usage', 15],
        ],
        'November: LOYAL25 on its charges; the October adjustment undiscounted (WELCOME10 was used up)',
      );
      same(t, november, upNovember);

      // December: a late November record (100 calls) after November closed: November re-priced 15.50, +0.50. LOYAL25
      // on November's corrected 25.50 = 6.375 → 6.38 (half to even, once, on the total), 6.25 given: −0.13 more.
      await w.usage(a, calls, [{ value: 100, timestamp: '2026-11-20T00:00:00Z', id: 'late-november' }]);
      await usageIs('2026-11-01', '2026-11-30', 2100);
      await advance('2026-12-31T23:00:00Z');
      const upDecember = await upcoming();
      await advance('2027-01-01T02:00:00Z');
      const december = await invoiceOf('2026-12-01');
      // Plan 10 − 2.50; calls 0; +0.50 − 0.13 on November; VAT 0.10 − 0.026 → 0.10 − 0.03 = 0.07. 7.87 + 0.07 = 7.94.
      t.match(december, { subtotal: 7.87, tax: 0.07, amount: 7.94 }, 'December to the cent');
      t.same(
        shape(sorted(december.lines), names).sort(),
        [
          ['adjustment', 0.5],
          ['discount', 'API calls', -0.13],
          ['discount', 'Plan', -2.5],
          ['flat', 10],
          ['tax', 0.07],
          ['usage', 0],
        ],
        'December: LOYAL25 on its charges and on the late usage of November',
      );
      const late = december.lines.find((l: any) => l.type === 'discount' && l.adjusts_invoice_id);
      t.match(late, {
        adjusts_invoice_id: november.id,
        coupon_id: forever.id,
        description: 'Discount LOYAL25 (25 % off) on the late usage of 2026-11-01 – 2026-11-30',
      });
      same(t, december, upDecember);
      for (const inv of [october, november, december])
        t.equal(inv.amount, sum(inv.lines.map((l: any) => l.amount)), `${inv.period_start}: amount = Σ lines`);
      // November and its adjustment together: 25.50 of charges, 6.38 off — 25 % of the corrected total, rounded once.
      const novemberDiscounts = [...november.lines, ...december.lines.filter((l: any) => l.adjusts_invoice_id)].filter(
        (l: any) =>
          l.type === 'discount' && l.coupon_id === forever.id && (l.adjusts_invoice_id ?? november.id) === november.id,
      );
      t.equal(sum(novemberDiscounts.map((l: any) => l.amount)), -6.38, 'November discounted 6.38 in all');

      // Removing the coupon: null; the subscription shows no discount, and January is not discounted.
      const removed = await w.made(ADMIN, 'PATCH', `/v1/subscriptions/${sub.id}`, { coupon_id: null });
      t.equal(removed.discount, null);
      t.notOk(
        (await upcoming()).lines.some((l: any) => l.type === 'discount'),
        'no discount after removal',
      );
      t.equal(
        Number(
          (
            await pg.query(
              `SELECT count(*) AS n FROM outbox_events WHERE type = 'subscription.updated' AND data->>'subscription_id' = $1`,
              [sub.id],
            )
          ).rows[0].n,
        ),
        3,
        'subscription.updated at creation, on the replacement and on the removal',
      );
    },
  );

  await t.test('threshold invoices and a repeating coupon: the period discounted once in all, 2 periods', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Progressive Coupon Co' });
    const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    const advance = async (frozen_time: string) => {
      const r = await call(ADMIN, 'POST', `/v1/test_clocks/${clock}/advance`, { frozen_time });
      t.equal(r.status, 200, `advance to ${frozen_time}: ${JSON.stringify(r.body).slice(0, 300)}`);
    };
    await w.card(a);
    const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
    const twice = await coupon({ name: 'TWO25', percent_off: 25, duration: 'repeating', duration_in_periods: 2 });
    const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: a.customerId,
      items: [{ product_id: plan }, { product_id: tiered, meter_id: calls }],
      billing_threshold: { amount: 15 },
      coupon_id: twice.id,
    });
    const octoberIs = (total: number) =>
      waitUntil(
        async () =>
          (
            await w.made(
              a.tokens.read,
              'GET',
              `/v1/meters/${calls}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
            )
          ).value === total,
        `October at ${total}`,
      );
    const invoices = async () =>
      (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
        .filter((i: any) => i.subscription_id === sub.id)
        .sort(
          (x: any, y: any) =>
            x.created_at.localeCompare(y.created_at) || (x.number ?? '').localeCompare(y.number ?? ''),
        );
    const upcomingDiscounts = async () =>
      (await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`)).lines.filter(
        (l: any) => l.type === 'discount',
      ).length;

    // 1,500 calls: 22.50 of charges, 25 % = 5.625 → 5.62 (Plan 2.50, calls 3.12); VAT 2.50 − 0.62 = 1.88: 18.76 ≥ 15.
    await w.usage(a, calls, [{ value: 1500, timestamp: '2026-10-02T00:00:00Z' }]);
    await octoberIs(1500);
    await advance('2026-10-05T00:00:00Z');
    const [first] = await invoices();
    t.match(
      first,
      { reason: 'threshold', subtotal: 16.88, tax: 1.88, amount: 18.76 },
      'the threshold invoice, discounted',
    );
    // 1,000 more → 2,500: 27.50, 25 % = 6.875 → 6.88 (Plan 2.50, calls 4.38); VAT 3.50 − 0.88 = 2.62: 23.24 in all.
    await w.usage(a, calls, [{ value: 1000, timestamp: '2026-10-10T00:00:00Z' }]);
    await octoberIs(2500);
    await advance('2026-11-01T02:00:00Z');
    const october = await invoices();
    t.equal(october.length, 2, 'one threshold invoice and the period invoice');
    const final = october[1];
    t.match(final, { reason: 'period', subtotal: 3.74, tax: 0.74, amount: 4.48 }, 'the final invoice: the rest');
    t.same(
      shape(sorted(final.lines), names).sort(),
      [
        ['deduction', -16.88],
        ['discount', 'API calls', -4.38],
        ['discount', 'Plan', -2.5],
        ['flat', 10],
        ['tax', 0.74],
        ['usage', 17.5],
      ],
      'the whole period discounted, less the (discounted) threshold invoice',
    );
    t.equal(sum(october.map((i: any) => i.amount)), 23.24, 'Σ = the period discounted once: 20.62 + 2.62');
    t.equal(sum(october.map((i: any) => i.tax)), 2.62, 'Σ tax = the tax on the discounted period');

    // repeating 2: November is the second period (a threshold invoice is no period), December is not discounted.
    t.ok((await upcomingDiscounts()) > 0, 'November is discounted');
    await advance('2026-12-01T02:00:00Z');
    const november = (await invoices()).find((i: any) => i.period_start === '2026-11-01' && i.reason === 'period');
    t.match(november, { subtotal: 7.5, tax: 0, amount: 7.5 }, 'November: Plan 10 − 2.50');
    t.equal(await upcomingDiscounts(), 0, 'December: TWO25 has done its two periods');
  });

  await t.test('redemption: admin only, isolation, expiry, currency, canceled', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Owner Co' });
    const b = await createTestAccount(w.api.infra, { name: 'Other Co' });
    const subA = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    const ten = await coupon({ name: 'TENPCT', percent_off: 10, duration: 'forever' });
    for (const who of [a, b] as TestAccount[]) {
      const r = await call(who.tokens.write, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: ten.id });
      t.equal(r.status, 403, `${who === a ? 'its own' : "another customer's"} token cannot apply a coupon`);
      t.equal(r.body.code, 'insufficient_scope');
    }
    const own = await call(b.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }],
      coupon_id: ten.id,
    });
    t.equal(own.status, 403, 'nor at creation');
    t.equal((await call(b.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`)).status, 404, 'another customer: 404');
    t.equal((await call(b.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${subA.id}`)).status, 404);
    t.equal(
      Number((await pg.query('SELECT times_redeemed FROM coupons WHERE id = $1', [ten.id])).rows[0].times_redeemed),
      0,
    );

    const unknown = await call(ADMIN, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: 'coupon_unknown' });
    t.equal(unknown.status, 422);
    t.equal(unknown.body.errors[0].field, 'coupon_id');
    const eur = await coupon({ name: 'EUR5', amount_off: 5, currency: 'EUR', duration: 'once' });
    const mismatch = await call(ADMIN, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: eur.id });
    t.equal(mismatch.status, 422);
    t.equal(mismatch.body.code, 'coupon_currency_mismatch');
    t.equal(mismatch.body.errors[0].field, 'coupon_id');

    // Expired: a customer living on a clock past the coupon's expiry.
    const d = await createTestAccount(w.api.infra, { name: 'Future Co' });
    const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2031-02-01T00:00:00Z' })).id;
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: d.customerId });
    const soon = await coupon({ name: 'SOON', percent_off: 5, duration: 'once', expires_at: '2031-01-01T00:00:00Z' });
    const expired = await call(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: d.customerId,
      items: [{ product_id: plan }],
      coupon_id: soon.id,
    });
    t.equal(expired.status, 409);
    t.equal(expired.body.code, 'coupon_expired');
    t.same(
      (await w.made(d.tokens.read, 'GET', '/v1/subscriptions')).data,
      [],
      'a refused coupon creates no subscription',
    );

    const ok = await w.made(ADMIN, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: ten.id });
    t.match(ok.discount, { coupon: { id: ten.id } });
    const again = await w.made(ADMIN, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: ten.id });
    t.same(again.discount, ok.discount, 'the coupon already on it: unchanged');
    t.equal((await w.made(ADMIN, 'GET', `/v1/coupons/${ten.id}`)).times_redeemed, 1, 'nothing counted twice');
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${subA.id}`, { status: 'canceled' });
    const canceled = await call(ADMIN, 'PATCH', `/v1/subscriptions/${subA.id}`, { coupon_id: null });
    t.equal(canceled.status, 409);
    t.equal(canceled.body.code, 'subscription_canceled');
  });

  await t.test('max_redemptions: of concurrent redemptions of the last slots, exactly that many win', async (t) => {
    for (const max of [1, 3]) {
      const c = await coupon({ name: `LIMITED${max}`, percent_off: 50, duration: 'once', max_redemptions: max });
      const subs = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const who = await createTestAccount(w.api.infra);
          return (await w.made(who.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] })).id;
        }),
      );
      const answers = await Promise.all(
        subs.map((id) => call(ADMIN, 'PATCH', `/v1/subscriptions/${id}`, { coupon_id: c.id })),
      );
      const won = answers.filter((r) => r.status === 200);
      t.equal(won.length, max, `max_redemptions ${max}: ${max} of 6 win`);
      for (const r of answers.filter((r) => r.status !== 200)) {
        t.equal(r.status, 409);
        t.equal(r.body.code, 'coupon_max_redemptions_reached');
      }
      t.equal((await w.made(ADMIN, 'GET', `/v1/coupons/${c.id}`)).times_redeemed, max, 'times_redeemed = max');
      const rows = await pg.query('SELECT count(*)::int AS n FROM coupon_redemptions WHERE coupon_id = $1', [c.id]);
      t.equal(rows.rows[0].n, max, 'one redemption row per winner');
    }
  });
});
