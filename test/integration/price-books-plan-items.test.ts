import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { deploymentMeter } from '../fixtures/operator.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';
import { decimalQ, fromMinor, mul, q, referencePrice, roundHalfAway, type RefModel } from '../unit/money-reference.js';

/**
 * Price books of a plan's own amounts (issue 46 items 1–2, docs/plans.md "Price books"): one USD plan whose item has
 * a minimum commitment (with EUR and JPY minimums in the item's currency_options) and whose other item prices one
 * meter per `model` value (each model with EUR and JPY prices in its currency_options, a default package price too).
 * Three customers in USD, EUR and JPY subscribe to it; their items take the plan's amounts in their currency; a real
 * close (a test clock's advance) bills each to the minor unit against a reference computed here in BigInt, and the
 * upcoming invoice said the same before. Then the refusals: books that are not money in their currency, a currency
 * the plan's amounts have no price in (422 currency_not_priced naming each field), a plan change to a version
 * without the subscriber's currency.
 */
type Code = 'USD' | 'EUR' | 'JPY';
const SCALE: Record<Code, number> = { USD: 2, EUR: 2, JPY: 0 };
const tiers = (low: string, high: string) => [
  { up_to: '1000', unit_price: low, flat_price: '0' },
  { up_to: null, unit_price: high, flat_price: '0' },
];
const BOOKS: Record<Code, { calls: string; minimum: string; large: string; small: RefModel; batch: string }> = {
  USD: {
    calls: '0.0123',
    minimum: '50',
    large: '0.03',
    small: { pricing: 'tiered', tiers_mode: 'graduated', tiers: tiers('0.002', '0.001') },
    batch: '0.5',
  },
  EUR: {
    calls: '0.0111',
    minimum: '45.5',
    large: '0.0275',
    small: { pricing: 'tiered', tiers_mode: 'graduated', tiers: tiers('0.0019', '0.00095') },
    batch: '0.45',
  },
  JPY: {
    calls: '1.7',
    minimum: '7500',
    large: '4.45',
    small: { pricing: 'tiered', tiers_mode: 'graduated', tiers: tiers('0.3', '0.15') },
    batch: '75',
  },
};
const CODES = Object.keys(BOOKS) as Code[];
/** October's usage of every customer: calls (below every minimum) and tokens per model (batch has no own price). */
const CALLS = 1234n;
const TOKENS = { large: 12_345n, small: 1_500n, batch: 250n } as const;

/** A tiered model as the API takes it (numbers), from the reference's text. */
const tieredIn = (m: RefModel) =>
  m.pricing === 'tiered'
    ? m.tiers.map((x) => ({ up_to: x.up_to === null ? null : Number(x.up_to), unit_price: Number(x.unit_price) }))
    : [];

/** The October invoice the documented rules give, in the currency's units (each line rounded once, half away). */
function reference(code: Code) {
  const b = BOOKS[code];
  const scale = SCALE[code];
  const unit = q(10n ** BigInt(scale));
  const calls = roundHalfAway(mul(mul(q(CALLS), decimalQ(b.calls)), unit));
  const minimum = roundHalfAway(mul(decimalQ(b.minimum), unit));
  const trueUp = minimum > calls ? minimum - calls : 0n;
  const large = referencePrice({ pricing: 'metered', price: b.large }, q(TOKENS.large), scale);
  const small = referencePrice(b.small, q(TOKENS.small), scale);
  const batch = referencePrice({ pricing: 'package', price: b.batch, package_size: '100' }, q(TOKENS.batch), scale);
  const s = (v: bigint) => Number(fromMinor(v, scale));
  return {
    calls: s(calls),
    trueUp: s(trueUp),
    models: { batch: s(batch), large: s(large), small: s(small) },
    amount: s(calls + trueUp + large + small + batch),
  };
}

t.test('price books of a plan’s minimum and per-dimension prices: USD, EUR, JPY to the minor unit', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const call = (method: string, path: string, body?: unknown) => callJson(w.api.url, ADMIN, method, path, body);
  const productBooks = (price: (c: Code) => string) => ({
    currency: 'USD',
    pricing: 'metered',
    price: Number(price('USD')),
    currency_options: { eur: { price: Number(price('EUR')) }, JPY: { price: Number(price('JPY')) } },
  });
  const callsProduct = (
    await w.made(ADMIN, 'POST', '/v1/products', { name: 'Calls', ...productBooks((c) => BOOKS[c].calls) })
  ).id as string;
  const tokensProduct = (await w.made(ADMIN, 'POST', '/v1/products', { name: 'Tokens', ...productBooks(() => '1') }))
    .id as string;
  const callsMeter = (await deploymentMeter(w.api.url, ADMIN, { name: 'Calls', aggregation: 'sum' })).id;
  const tokensMeter = (
    await deploymentMeter(w.api.url, ADMIN, {
      name: 'Tokens',
      unit: 'tokens',
      aggregation: 'sum',
      dimensions: ['model'],
    } as Parameters<typeof deploymentMeter>[2])
  ).id;
  const minimumItem = {
    product_id: callsProduct,
    meter_id: callsMeter,
    minimum_amount: 50,
    currency_options: { eur: { minimum_amount: 45.5 }, JPY: { minimum_amount: 7500 } },
  };
  const booksOf = (f: (c: Code) => unknown) => ({ EUR: f('EUR'), JPY: f('JPY') });
  const tokensItem = {
    product_id: tokensProduct,
    meter_id: tokensMeter,
    dimension: 'model',
    prices: [
      {
        value: 'large',
        price: {
          pricing: 'metered',
          price: 0.03,
          currency_options: booksOf((c) => ({ price: Number(BOOKS[c].large) })),
        },
      },
      {
        value: 'small',
        price: {
          pricing: 'tiered',
          tiers_mode: 'graduated',
          tiers: tieredIn(BOOKS.USD.small),
          currency_options: booksOf((c) => ({ tiers: tieredIn(BOOKS[c].small) })),
        },
      },
    ],
    default_price: {
      pricing: 'package',
      price: 0.5,
      package_size: 100,
      currency_options: booksOf((c) => ({ price: Number(BOOKS[c].batch) })),
    },
  };
  const plan = await w.made(ADMIN, 'POST', '/v1/plans', {
    name: 'Metered worldwide',
    currency: 'USD',
    interval: 'month',
    items: [minimumItem, tokensItem],
  });

  await t.test('the plan shows its books, upper case, digit for digit', async (t) => {
    t.same(plan.items[0].currency_options, { EUR: { minimum_amount: 45.5 }, JPY: { minimum_amount: 7500 } });
    t.same(plan.items[1].prices[0].price.currency_options, { EUR: { price: 0.0275 }, JPY: { price: 4.45 } });
    t.same(plan.items[1].prices[1].price.currency_options.JPY, {
      tiers: [
        { up_to: 1000, unit_price: 0.3, flat_price: 0 },
        { up_to: null, unit_price: 0.15, flat_price: 0 },
      ],
    });
    t.same(plan.items[1].default_price.currency_options, { EUR: { price: 0.45 }, JPY: { price: 75 } });
    t.same((await w.made(ADMIN, 'GET', `/v1/plans/${plan.id}`)).items, plan.items, 'and reads back');
  });

  await t.test('books that are not money in their currency: 422 naming the field, nothing written', async (t) => {
    const withMinimum = (options: unknown) => ({ ...minimumItem, currency_options: options });
    const model = (options: unknown) => ({
      ...tokensItem,
      prices: [{ value: 'large', price: { pricing: 'metered', price: 0.03, currency_options: options } }],
    });
    const bad: [string, unknown, string][] = [
      [
        'a yen minimum with decimals',
        withMinimum({ JPY: { minimum_amount: 7500.5 } }),
        'items[0].currency_options.JPY.minimum_amount',
      ],
      [
        'a dinar minimum finer than fils',
        withMinimum({ kwd: { minimum_amount: 1.0005 } }),
        'items[0].currency_options.kwd.minimum_amount',
      ],
      ['an unknown currency', withMinimum({ XYZ: { minimum_amount: 1 } }), 'items[0].currency_options.XYZ'],
      ['the plan’s own currency', withMinimum({ USD: { minimum_amount: 1 } }), 'items[0].currency_options.USD'],
      ['books without a minimum', { ...minimumItem, minimum_amount: undefined }, 'items[0].currency_options'],
      [
        'tiers for a metered price',
        model({ EUR: { tiers: [{ up_to: null, unit_price: 1 }] } }),
        'items[0].prices[0].price.currency_options.EUR.tiers',
      ],
      [
        'a price of 10 decimals',
        model({ EUR: { price: 0.0000000001 } }),
        'items[0].prices[0].price.currency_options.EUR.price',
      ],
      ['a model’s own currency', model({ usd: { price: 1 } }), 'items[0].prices[0].price.currency_options.USD'],
    ];
    for (const [what, item, field] of bad) {
      const r = await call('POST', '/v1/plans', { name: 'Bad', currency: 'USD', interval: 'month', items: [item] });
      t.equal(r.status, 422, what);
      t.ok(
        r.body.errors?.some((e: { field: string }) => e.field === field),
        `${what}: names ${field} (${JSON.stringify(r.body.errors)})`,
      );
    }
    const onSubscription = await call('POST', '/v1/subscriptions', {
      customer_id: (await createTestAccount(w.api.infra, { name: 'Books direct' })).customerId,
      items: [minimumItem],
    });
    t.equal(onSubscription.status, 422, 'a subscription’s own items take no books: they are in its currency');
    const plans = (await w.made(ADMIN, 'GET', '/v1/plans?per_page=100')).data;
    t.same(
      plans.filter((p: { name: string }) => p.name === 'Bad'),
      [],
      'no plan was written',
    );
  });

  const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-01T00:00:00Z' })).id;
  const customers = {} as Record<Code, TestAccount>;
  const subs = {} as Record<Code, any>;
  await t.test('each customer’s items take the plan’s amounts in its currency', async (t) => {
    for (const code of CODES) {
      customers[code] = await createTestAccount(w.api.infra, { name: `Plan books ${code}` });
      await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: customers[code].customerId });
      if (code !== 'USD')
        await w.made(ADMIN, 'PATCH', `/v1/customers/${customers[code].customerId}`, { currency: code });
      subs[code] = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: customers[code].customerId,
        plan_id: plan.id,
      });
      t.equal(subs[code].currency, code);
      t.equal(subs[code].plan_id, plan.id);
      t.equal(subs[code].items[0].minimum_amount, Number(BOOKS[code].minimum), `${code}: the minimum in ${code}`);
      t.same(subs[code].items[1].prices[0].price, { pricing: 'metered', price: Number(BOOKS[code].large) });
      t.same(subs[code].items[1].default_price, {
        pricing: 'package',
        price: Number(BOOKS[code].batch),
        package_size: 100,
      });
      t.notOk(subs[code].items[0].currency_options, 'a subscription’s item carries no books');
    }
  });

  await t.test('a currency the plan’s own amounts have no price in: 422 currency_not_priced naming each', async (t) => {
    const gbp = await createTestAccount(w.api.infra, { name: 'Plan books GBP' });
    await w.made(ADMIN, 'PATCH', `/v1/customers/${gbp.customerId}`, { currency: 'GBP' });
    for (const id of [callsProduct, tokensProduct])
      await w.made(ADMIN, 'PATCH', `/v1/products/${id}`, { currency_options: { GBP: { price: 1 } } });
    const r = await call('POST', '/v1/subscriptions', { customer_id: gbp.customerId, plan_id: plan.id });
    t.equal(r.status, 422);
    t.equal(r.body.code, 'currency_not_priced');
    const messages = (r.body.errors ?? []).map((e: { field: string; message: string }) => `${e.field}: ${e.message}`);
    for (const f of [
      'items[0].minimum_amount',
      'items[1].prices[0].price',
      'items[1].prices[1].price',
      'items[1].default_price',
    ])
      t.ok(
        messages.some(
          (m: string) => m.startsWith('plan_id: ') && m.includes(`no price in GBP: ${f} is priced in USD only`),
        ),
        `names ${f}: ${JSON.stringify(messages)}`,
      );
    t.equal((await w.made(ADMIN, 'GET', `/v1/subscriptions?customer_id=${gbp.customerId}`)).data.length, 0);
  });

  await t.test(
    'October closes in each currency: amounts = the BigInt reference, the upcoming invoice agreed',
    async (t) => {
      for (const code of CODES) {
        await w.usage(customers[code], callsMeter, [
          { value: Number(CALLS), timestamp: '2026-10-10T12:00:00Z', id: `calls-${code}` },
        ]);
        await w.usage(
          customers[code],
          tokensMeter,
          Object.entries(TOKENS).map(([model, n], i) => ({
            value: Number(n),
            timestamp: `2026-10-1${i + 1}T12:00:00Z`,
            id: `tokens-${code}-${model}`,
            dimensions: { model },
          })),
        );
        const october = async (meter: string) =>
          (
            await w.made(
              customers[code].tokens.read,
              'GET',
              `/v1/meters/${meter}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
            )
          ).value;
        await waitUntil(
          async () =>
            (await october(callsMeter)) === Number(CALLS) &&
            (await october(tokensMeter)) === Number(TOKENS.large + TOKENS.small + TOKENS.batch),
          `${code}'s October usage`,
        );
      }
      const advance = async (to: string) => {
        const r = await call('POST', `/v1/test_clocks/${clock}/advance`, { frozen_time: to });
        t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
      };
      await advance('2026-10-31T12:00:00Z');
      const upcoming = {} as Record<Code, any>;
      for (const code of CODES)
        upcoming[code] = await w.made(ADMIN, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${subs[code].id}`);
      await advance('2026-11-01T02:00:00Z');
      for (const code of CODES) {
        const ref = reference(code);
        const invoices = (await w.made(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${customers[code].customerId}`))
          .data;
        t.equal(invoices.length, 1, `${code}: one invoice`);
        const inv = invoices[0];
        t.match(inv, { currency: code, period_start: '2026-10-01', amount: ref.amount });
        const amounts = (type: string, product: string) =>
          inv.lines.filter((l: any) => l.type === type && l.product_id === product).map((l: any) => l.amount);
        t.same(amounts('usage', callsProduct), [ref.calls], `${code}: calls at the ${code} price`);
        t.same(
          amounts('minimum_commitment', callsProduct),
          [ref.trueUp],
          `${code}: trued up to ${BOOKS[code].minimum}`,
        );
        t.same(
          Object.fromEntries(
            inv.lines
              .filter((l: any) => l.product_id === tokensProduct)
              .map((l: any) => [l.dimensions.model, l.amount])
              .sort(([a]: string[], [b]: string[]) => a!.localeCompare(b!)),
          ),
          ref.models,
          `${code}: each model at its ${code} price`,
        );
        const sum = inv.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
        t.ok(sum.eq(String(inv.amount)), `${code}: amount = Σ lines`);
        for (const l of inv.lines)
          t.ok((String(l.amount).split('.')[1] ?? '').length <= SCALE[code], `${code}: ${l.amount} to the minor unit`);
        t.same(upcoming[code].lines, inv.lines, `${code}: the upcoming invoice showed these lines`);
        t.equal(upcoming[code].amount, inv.amount, `${code}: and this amount`);
        t.comment(`${code}: ${JSON.stringify(ref)}`);
      }
    },
  );

  await t.test('a plan change keeps the currency: a version without it is 422, one with it re-prices', async (t) => {
    const v2 = await w.made(ADMIN, 'POST', `/v1/plans/${plan.id}/versions`, {
      items: [{ ...minimumItem, minimum_amount: 60, currency_options: { EUR: { minimum_amount: 55 } } }, tokensItem],
    });
    const change = (code: Code) =>
      call('POST', `/v1/subscriptions/${subs[code].id}/plan_change`, {
        plan_id: plan.id,
        plan_version: v2.version,
        at: 'now',
      });
    const jpy = await change('JPY');
    t.equal(jpy.status, 422);
    t.equal(jpy.body.code, 'currency_not_priced');
    t.match(jpy.body.errors?.[0]?.message, /no price in JPY: items\[0\]\.minimum_amount is priced in USD only/);
    const eur = await change('EUR');
    t.equal(eur.status, 200, JSON.stringify(eur.body).slice(0, 300));
    t.equal(eur.body.currency, 'EUR');
    t.equal(eur.body.plan_version, v2.version);
    t.equal(eur.body.items[0].minimum_amount, 55, 'the new version’s EUR minimum');
    for (const dry_run of [true, false]) {
      const moved = await call('POST', `/v1/plans/${plan.id}/migrate`, {
        from_version: 1,
        to_version: v2.version,
        at: 'now',
        dry_run,
      });
      t.equal(moved.status, 422, `a move of version 1's JPY subscriber (dry run: ${dry_run})`);
      t.equal(moved.body.code, 'currency_not_priced');
      t.equal(moved.body.errors?.[0]?.field, 'to_version');
      t.match(moved.body.errors?.[0]?.message, /no price in JPY: items\[0\]\.minimum_amount/);
    }
    t.equal((await w.made(ADMIN, 'GET', `/v1/subscriptions/${subs.JPY.id}`)).plan_version, 1, 'nothing moved');
    t.equal((await w.made(ADMIN, 'GET', `/v1/subscriptions/${subs.USD.id}`)).plan_version, 1);
  });
});
