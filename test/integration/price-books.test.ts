import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { deploymentMeter } from '../fixtures/operator.js';
import { waitUntil } from '../fixtures/env.js';
import {
  decimalQ,
  fromMinor,
  largestRemainder,
  mul,
  percent,
  q,
  roundHalfAway,
  toMinor,
} from '../unit/money-reference.js';

/**
 * Price books (issue 46 item 2, docs/plans.md "Price books", docs/billing.md "Price books: a worked example"): one
 * plan whose products are priced in USD, EUR, JPY and KWD (ISO 4217 exponents 2, 2, 0, 3); four customers, each in
 * its own currency (one fixed by its first subscription, three set explicitly), billed through a real close (a test
 * clock's advance runs it) with a per-currency amount_off coupon, 20 % VAT and, for the yen customer, prepaid credit.
 * Every amount is checked to the minor unit against a reference computed here in BigInt (test/unit/money-reference.ts).
 * Then the refusals: a plan, items or coupon with no price in the customer's currency (422 naming the currency and
 * field), a threshold finer than the currency's minor unit, a currency change once subscribed (409).
 */
const BOOKS = {
  USD: { scale: 2, platform: '10', tokens: '0.0123', coupon: '2' },
  EUR: { scale: 2, platform: '9.5', tokens: '0.0111', coupon: '1.5' },
  JPY: { scale: 0, platform: '1480', tokens: '1.7', coupon: '300' },
  KWD: { scale: 3, platform: '3.075', tokens: '0.00377', coupon: '0.625' },
} as const;
type Code = keyof typeof BOOKS;
const TOKENS_USED: Record<Code, bigint> = { USD: 12_345n, EUR: 12_345n, JPY: 12_345n, KWD: 54_321n };
const JPY_CREDIT = 500n;

/** The smaller of two amounts in minor units (BigInt: Math.min takes numbers only). */
const smaller = (a: bigint, b: bigint) => [a, b].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))[0]!;

/**
 * The invoice the documented rules give, in minor units: each product's line (quantity × price, rounded once half away
 * from zero), the coupon's amount (at most the charges) split over the products by charges (largest remainder, ties
 * in product id order), VAT per line on its amount net of its discount share, then prepaid credit up to the total.
 */
function reference(code: Code, ids: { platform: string; tokens: string }, credit: bigint) {
  const b = BOOKS[code];
  const unit = q(10n ** BigInt(b.scale));
  const platform = roundHalfAway(mul(decimalQ(b.platform), unit));
  const tokens = roundHalfAway(mul(mul(q(TOKENS_USED[code]), decimalQ(b.tokens)), unit));
  const charges = platform + tokens;
  const couponMinor = toMinor(b.coupon, b.scale);
  const discount = smaller(couponMinor, charges);
  // Product id order: the discount lines' order and the tie-break.
  const byId = [
    { id: ids.platform, charge: platform },
    { id: ids.tokens, charge: tokens },
    // Product id order as the server sorts: by UTF-16 code unit (localeCompare would put 'a' before 'H').
  ].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const shares = largestRemainder(
    discount,
    byId.map((p) => p.charge),
  );
  const discountOf = new Map(byId.map((p, i) => [p.id, shares[i]!]));
  const vat = percent('20');
  const tax =
    roundHalfAway(mul(q(platform - discountOf.get(ids.platform)!), vat)) +
    roundHalfAway(mul(q(tokens - discountOf.get(ids.tokens)!), vat));
  const subtotal = charges - discount;
  const applied = smaller(credit, subtotal + tax);
  const s = (v: bigint) => Number(fromMinor(v, b.scale));
  return {
    platform: s(platform),
    tokens: s(tokens),
    discounts: byId.map((p, i) => [p.id, s(-shares[i]!)]),
    subtotal: s(subtotal),
    tax: s(tax),
    credit: s(-applied),
    amount: s(subtotal + tax - applied),
  };
}

t.test('price books: one plan billed in USD, EUR, JPY and KWD, each to its minor unit', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const vat = (await w.made(ADMIN, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false })).id;
  const options = (field: 'platform' | 'tokens') =>
    Object.fromEntries(
      (['EUR', 'JPY', 'KWD'] as const).map((c) => [c.toLowerCase(), { price: Number(BOOKS[c][field]) }]),
    );
  const platform = await w.made(ADMIN, 'POST', '/v1/products', {
    name: 'Platform',
    currency: 'USD',
    price: 10,
    currency_options: options('platform'),
    tax_rate_ids: [vat],
  });
  const tokensProduct = await w.made(ADMIN, 'POST', '/v1/products', {
    name: 'Tokens',
    currency: 'USD',
    pricing: 'metered',
    price: 0.0123,
    currency_options: options('tokens'),
    tax_rate_ids: [vat],
  });
  const ids = { platform: platform.id as string, tokens: tokensProduct.id as string };
  const meter = (await deploymentMeter(w.api.url, ADMIN, { name: 'Tokens', unit: 'tokens', aggregation: 'sum' })).id;
  const plan = await w.made(ADMIN, 'POST', '/v1/plans', {
    name: 'Global',
    currency: 'USD',
    interval: 'month',
    items: [{ product_id: ids.platform }, { product_id: ids.tokens, meter_id: meter }],
  });
  const coupon = await w.made(ADMIN, 'POST', '/v1/coupons', {
    name: 'WORLD',
    amount_off: 2,
    currency: 'USD',
    currency_options: { EUR: { amount_off: 1.5 }, jpy: { amount_off: 300 }, KWD: { amount_off: 0.625 } },
    duration: 'once',
  });

  await t.test('products and coupons show their books, upper case, digit for digit', async (t) => {
    t.same(platform.currency_options, { EUR: { price: 9.5 }, JPY: { price: 1480 }, KWD: { price: 3.075 } });
    t.same(tokensProduct.currency_options, { EUR: { price: 0.0111 }, JPY: { price: 1.7 }, KWD: { price: 0.00377 } });
    t.same(coupon.currency_options, { EUR: { amount_off: 1.5 }, JPY: { amount_off: 300 }, KWD: { amount_off: 0.625 } });
    t.same((await w.made(ADMIN, 'GET', `/v1/products/${ids.platform}`)).currency_options, platform.currency_options);
  });

  await t.test('bad books are refused: 422 naming the field, nothing written', async (t) => {
    const bad: [string, string, Record<string, unknown>, string][] = [
      [
        'POST',
        '/v1/products',
        { name: 'x', currency: 'USD', price: 1, currency_options: { usd: { price: 2 } } },
        'currency_options.usd',
      ],
      [
        'POST',
        '/v1/products',
        { name: 'x', currency: 'USD', price: 1, currency_options: { XYZ: { price: 2 } } },
        'currency_options.XYZ',
      ],
      [
        'POST',
        '/v1/products',
        { name: 'x', currency: 'USD', price: 1, currency_options: { JPY: {} } },
        'currency_options.JPY.price',
      ],
      [
        'POST',
        '/v1/products',
        { name: 'x', currency: 'USD', price: 1, currency_options: { EUR: { price: 0.0000000001 } } },
        'currency_options.EUR.price',
      ],
      [
        'POST',
        '/v1/products',
        {
          name: 'x',
          currency: 'USD',
          pricing: 'tiered',
          tiers_mode: 'graduated',
          tiers: [{ up_to: null, unit_price: 1 }],
          currency_options: { EUR: { price: 1 } },
        },
        'currency_options.EUR.price',
      ],
      ['PATCH', `/v1/products/${ids.platform}`, { currency_options: { USD: { price: 3 } } }, 'currency_options.USD'],
      [
        'PATCH',
        `/v1/products/${ids.platform}`,
        { currency_options: { GBP: { tiers: [{ up_to: null, unit_price: 1 }] } } },
        'currency_options.GBP.price',
      ],
      [
        'POST',
        '/v1/coupons',
        { name: 'x', percent_off: 10, duration: 'once', currency_options: { EUR: { amount_off: 1 } } },
        'currency_options',
      ],
      [
        'POST',
        '/v1/coupons',
        { name: 'x', amount_off: 1, currency: 'USD', duration: 'once', currency_options: { JPY: { amount_off: 1.5 } } },
        'currency_options.JPY.amount_off',
      ],
      ['POST', '/v1/customers', { name: 'x', external_id: 'books-bad', currency: 'XYZ' }, 'currency'],
    ];
    for (const [method, path, body, field] of bad) {
      const r = await call(ADMIN, method, path, body);
      t.equal(r.status, 422, `${JSON.stringify(body)} → 422`);
      t.ok(
        (r.body.errors ?? []).some((e: { field: string }) => e.field === field),
        `names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.same((await w.made(ADMIN, 'GET', `/v1/products/${ids.platform}`)).currency_options, platform.currency_options);
  });

  // Four customers on one test clock at the month's start: full periods, closed by the clock's advance.
  const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
  const customers = {} as Record<Code, TestAccount>;
  for (const code of Object.keys(BOOKS) as Code[]) {
    customers[code] = await createTestAccount(w.api.infra, { name: `Books ${code}` });
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: customers[code].customerId });
    // USD: no currency chosen; its first subscription fixes the plan's own.
    if (code !== 'USD')
      t.equal(
        (await w.made(ADMIN, 'PATCH', `/v1/customers/${customers[code].customerId}`, { currency: code.toLowerCase() }))
          .currency,
        code,
      );
  }
  await w.made(ADMIN, 'POST', '/v1/billing/credits', {
    account_id: customers.JPY.accountId,
    currency: 'JPY',
    amount: Number(JPY_CREDIT),
    description: 'Welcome credit',
  });

  await t.test('threshold amounts and credits follow the customer’s currency', async (t) => {
    for (const [code, amount] of [
      ['JPY', 100.5],
      ['KWD', 10.0005],
    ] as const) {
      const r = await call(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: customers[code].customerId,
        plan_id: plan.id,
        billing_threshold: { amount },
      });
      t.equal(r.status, 422, `${code} ${amount}`);
      t.same(r.body.errors?.[0]?.field, 'billing_threshold.amount');
      t.match(r.body.errors?.[0]?.message, `decimal places in ${code}`);
    }
    const grant = await call(ADMIN, 'POST', '/v1/billing/credits', {
      account_id: customers.EUR.accountId,
      currency: 'USD',
      amount: 5,
      description: 'x',
    });
    t.equal(grant.status, 422, 'credit in another currency than the customer’s');
    t.same(grant.body.errors?.[0]?.field, 'currency');
  });

  const subs = {} as Record<Code, { id: string; currency: string }>;
  await t.test('each customer subscribes to the one plan in its own currency', async (t) => {
    for (const code of Object.keys(BOOKS) as Code[]) {
      subs[code] = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: customers[code].customerId,
        plan_id: plan.id,
        coupon_id: coupon.id,
      });
      t.equal(subs[code].currency, code, `${code}: the subscription bills in it`);
    }
    const usd = await w.made(ADMIN, 'GET', `/v1/customers/${customers.USD.customerId}`);
    t.equal(usd.currency, 'USD', 'the first subscription fixed the USD customer’s currency');
  });

  await t.test('subscribed customers keep their currency: 409; the same one is no change', async (t) => {
    const r = await call(ADMIN, 'PATCH', `/v1/customers/${customers.EUR.customerId}`, { currency: 'JPY' });
    t.equal(r.status, 409);
    t.equal(r.body.code, 'customer_currency_locked');
    t.same(r.body.errors?.[0]?.field, 'currency');
    t.equal((await call(ADMIN, 'PATCH', `/v1/customers/${customers.EUR.customerId}`, { currency: 'eur' })).status, 200);
    t.equal((await w.made(ADMIN, 'GET', `/v1/customers/${customers.EUR.customerId}`)).currency, 'EUR');
  });

  await t.test('no price in the customer’s currency: 422 naming the currency and field', async (t) => {
    const gbp = await createTestAccount(w.api.infra, { name: 'Books GBP' });
    await w.made(ADMIN, 'PATCH', `/v1/customers/${gbp.customerId}`, { currency: 'GBP' });
    const byPlan = await call(ADMIN, 'POST', '/v1/subscriptions', { customer_id: gbp.customerId, plan_id: plan.id });
    t.equal(byPlan.status, 422);
    t.equal(byPlan.body.code, 'currency_not_priced');
    t.equal(byPlan.body.errors?.[0]?.field, 'plan_id');
    t.match(byPlan.body.errors?.[0]?.message, /no price in GBP: items\[0\]/);
    const byItems = await call(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: gbp.customerId,
      items: [{ product_id: ids.tokens, meter_id: meter }],
    });
    t.equal(byItems.status, 422);
    t.equal(byItems.body.errors?.[0]?.field, 'items[0].product_id');
    t.match(byItems.body.errors?.[0]?.message, /no price in GBP \(it has USD, EUR, JPY, KWD\)/);
    // A book added later makes the plan available in it (a PATCH adds currencies, never removes one).
    const usOnly = await w.made(ADMIN, 'POST', '/v1/coupons', {
      name: 'USONLY',
      amount_off: 5,
      currency: 'USD',
      duration: 'once',
    });
    for (const id of [ids.platform, ids.tokens])
      await w.made(ADMIN, 'PATCH', `/v1/products/${id}`, { currency_options: { GBP: { price: 1 } } });
    const noCoupon = await call(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: gbp.customerId,
      plan_id: plan.id,
      coupon_id: usOnly.id,
    });
    t.equal(noCoupon.status, 422, 'a coupon with no amount in GBP');
    t.equal(noCoupon.body.code, 'coupon_currency_mismatch');
    t.equal(noCoupon.body.errors?.[0]?.field, 'coupon_id');
    t.match(noCoupon.body.errors?.[0]?.message, /no amount_off in GBP/);
    t.equal(
      (await w.made(ADMIN, 'GET', `/v1/subscriptions?customer_id=${gbp.customerId}`)).data.length,
      0,
      'nothing was subscribed',
    );
    t.equal((await w.made(ADMIN, 'GET', `/v1/customers/${gbp.customerId}`)).currency, 'GBP');
    const patched = await w.made(ADMIN, 'GET', `/v1/products/${ids.platform}`);
    t.same(Object.keys(patched.currency_options), ['EUR', 'GBP', 'JPY', 'KWD'], 'the PATCH added GBP, kept the rest');
    const gbpSub = await call(ADMIN, 'POST', '/v1/subscriptions', { customer_id: gbp.customerId, plan_id: plan.id });
    t.equal(gbpSub.status, 201, 'priced in GBP now');
    t.equal(gbpSub.body.currency, 'GBP');
  });

  await t.test('October closes in each currency: amounts to the minor unit = the BigInt reference', async (t) => {
    for (const code of Object.keys(BOOKS) as Code[])
      await w.usage(customers[code], meter, [
        { value: Number(TOKENS_USED[code]), timestamp: '2026-10-15T12:00:00Z', id: `books-${code}` },
      ]);
    for (const code of Object.keys(BOOKS) as Code[])
      await waitUntil(
        async () =>
          (
            await w.made(
              customers[code].tokens.read,
              'GET',
              `/v1/meters/${meter}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
            )
          ).value === Number(TOKENS_USED[code]),
        `${code}'s October usage`,
      );
    const advanced = await call(ADMIN, 'POST', `/v1/test_clocks/${clock}/advance`, {
      frozen_time: '2026-11-01T02:00:00Z',
    });
    t.equal(advanced.status, 200, JSON.stringify(advanced.body).slice(0, 300));
    for (const code of Object.keys(BOOKS) as Code[]) {
      const ref = reference(code, ids, code === 'JPY' ? JPY_CREDIT : 0n);
      const invoices = (await w.made(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${customers[code].customerId}`))
        .data;
      t.equal(invoices.length, 1, `${code}: one invoice`);
      const inv = invoices[0];
      t.match(inv, {
        currency: code,
        period_start: '2026-10-01',
        subtotal: ref.subtotal,
        tax: ref.tax,
        amount: ref.amount,
      });
      const amountOf = (type: string, product: string | null) =>
        inv.lines.filter((l: any) => l.type === type && l.product_id === product).map((l: any) => l.amount);
      t.same(amountOf('flat', ids.platform), [ref.platform], `${code}: Platform at its ${code} price`);
      t.same(amountOf('usage', ids.tokens), [ref.tokens], `${code}: ${TOKENS_USED[code]} tokens at its ${code} price`);
      t.same(
        inv.lines.filter((l: any) => l.type === 'discount').map((l: any) => [l.product_id, l.amount]),
        ref.discounts.filter(([, a]) => a !== 0),
        `${code}: WORLD takes ${BOOKS[code].coupon} ${code} off, split by charges`,
      );
      t.same(amountOf('credit', null), ref.credit ? [ref.credit] : [], `${code}: prepaid credit in ${code}`);
      const exponent = BOOKS[code].scale;
      for (const l of inv.lines)
        t.ok(
          (String(l.amount).split('.')[1] ?? '').length <= exponent,
          `${code}: ${l.type} ${l.amount} has at most ${exponent} decimals`,
        );
      t.comment(`${code}: ${JSON.stringify(ref)}`);
    }
  });
});
