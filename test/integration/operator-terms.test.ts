import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';

/**
 * Commercial terms belong to the operator (issue 49 items 2 and 3; docs/operator-mode.md "Who changes a
 * subscription's terms"). The reproductions — a customer's token dropping the metered item of the
 * subscription the operator made for it, canceling it, a trial to 9999, a threshold of 0.01 — against a real api
 * and Postgres, and what portal settings let the operator give back.
 */
t.test('commercial terms belong to the operator', async (t) => {
  const config = await isolatedConfig(t, { BILLING_THRESHOLD_MINIMUMS: 'JPY:500' });
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const [a] = await createCustomers(api.url, ADMIN, 1, 'terms');
  const A = await customerToken(api.infra, a!.accountId);
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const product = async (body: Record<string, unknown>) =>
    (await made(ADMIN, 'POST', '/v1/products', { name: 'p', currency: 'USD', ...body })).id as string;
  const flat = await product({ price: 49 });
  const metered = await product({ price: 0.01, pricing: 'metered' });
  const seats = (await deploymentMeter(api.url, ADMIN, { name: 'seats', aggregation: 'sum' })).id as string;
  const settings = (change: Record<string, boolean>) => made(ADMIN, 'PATCH', '/v1/portal_settings', change);

  const operatorMade = async () =>
    made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: a!.id,
      items: [{ product_id: flat }, { product_id: metered, meter_id: seats }],
    });

  await t.test('portal settings: admin reads and sets them, defaults first', async (t) => {
    const got = await made(ADMIN, 'GET', '/v1/portal_settings');
    t.same(got, {
      customer_can_change_items: false,
      customer_can_cancel: false,
      customer_can_change_threshold: false,
      self_serve_subscriptions: true,
      portal_change_plan: false,
      portal_update_billing_details: true,
      customer_can_buy_credit: false,
      updated_at: null,
    });
    const bad = await call(ADMIN, 'PATCH', '/v1/portal_settings', { customer_can_cancel: 'yes', nope: true });
    t.equal(bad.status, 422);
    t.same(bad.body.errors.map((e: any) => e.field).sort(), ['customer_can_cancel', 'nope'], 'each field named');
    t.equal((await call(ADMIN, 'PATCH', '/v1/portal_settings', {})).status, 422, 'an empty change');
    const read = await call(A, 'GET', '/v1/portal_settings');
    t.equal(read.status, 200, 'a customer reads what it may do (its console offers only that)');
    t.equal((await call(A, 'PATCH', '/v1/portal_settings', { customer_can_cancel: true })).status, 403, 'never sets');
    const set = await settings({ customer_can_cancel: true });
    t.equal(set.customer_can_cancel, true);
    t.equal(set.customer_can_change_items, false, 'the others keep their value');
    t.match(set.updated_at, /^\d{4}-\d\d-\d\dT/);
    t.equal((await settings({ customer_can_cancel: false })).customer_can_cancel, false);
  });

  await t.test('the issue’s reproduction: the customer no longer rewrites the operator’s subscription', async (t) => {
    const sub = await operatorMade();
    t.equal(sub.managed_by, 'operator');
    const path = `/v1/subscriptions/${sub.id}`;
    t.equal((await call(A, 'GET', path)).status, 200, 'the customer reads it');
    for (const [body, field] of [
      [{ items: [{ product_id: flat }] }, 'items'],
      [{ status: 'canceled' }, 'status'],
      [{ billing_threshold: { amount: 100 } }, 'billing_threshold'],
      [{ billing_threshold: null }, 'billing_threshold'],
    ] as const) {
      const r = await call(A, 'PATCH', path, body);
      t.equal(r.status, 403, `${JSON.stringify(body)} → 403`);
      t.equal(r.body.code, 'operator_terms');
      t.same(
        r.body.errors.map((e: any) => e.field),
        [field],
      );
    }
    const both = await call(A, 'PATCH', path, { items: [{ product_id: flat }], status: 'canceled' });
    t.same(
      both.body.errors.map((e: any) => e.field),
      ['items', 'status'],
      'every refused field named',
    );
    const coupon = await call(A, 'PATCH', path, { coupon_id: null });
    t.same([coupon.status, coupon.body.code], [403, 'insufficient_scope'], 'coupons stay admin-only');
    const after = await made(ADMIN, 'GET', path);
    t.same([after.status, after.items.length, after.billing_threshold], ['active', 2, null], 'nothing of it changed');
    const byOperator = await call(ADMIN, 'PATCH', path, { items: [{ product_id: flat }] });
    t.equal(byOperator.status, 200, 'the operator changes it');
  });

  await t.test('portal settings give the customer back what the operator allows', async (t) => {
    const sub = await operatorMade();
    const path = `/v1/subscriptions/${sub.id}`;
    await settings({ customer_can_change_items: true, customer_can_change_threshold: true });
    t.equal((await call(A, 'PATCH', path, { items: [{ product_id: flat }] })).status, 200, 'items allowed');
    t.equal((await call(A, 'PATCH', path, { billing_threshold: { amount: 20 } })).status, 200, 'threshold allowed');
    const cancel = await call(A, 'PATCH', path, { status: 'canceled' });
    t.same([cancel.status, cancel.body.code], [403, 'operator_terms'], 'canceling still the operator’s');
    await settings({ customer_can_cancel: true });
    t.equal((await call(A, 'PATCH', path, { status: 'canceled' })).status, 200, 'now allowed too');
    await settings({
      customer_can_change_items: false,
      customer_can_change_threshold: false,
      customer_can_cancel: false,
    });
  });

  await t.test(
    'self-serve: the customer’s own subscriptions keep today’s rules until the operator turns it off',
    async (t) => {
      const own = await made(A, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }] });
      t.equal(own.managed_by, 'customer');
      const path = `/v1/subscriptions/${own.id}`;
      t.equal((await call(A, 'PATCH', path, { billing_threshold: { amount: 30 } })).status, 200, 'its own threshold');
      await settings({ self_serve_subscriptions: false });
      const create = await call(A, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }] });
      t.same([create.status, create.body.code], [403, 'self_serve_disabled'], 'no new subscription');
      const change = await call(A, 'PATCH', path, { status: 'canceled' });
      t.same([change.status, change.body.code], [403, 'self_serve_disabled'], 'no change to its own either');
      t.equal(
        (await call(ADMIN, 'POST', '/v1/subscriptions', { customer_id: a!.id, items: [{ product_id: flat }] })).status,
        201,
        'the operator still subscribes it',
      );
      await settings({ self_serve_subscriptions: true });
      t.equal((await call(A, 'PATCH', path, { status: 'canceled' })).status, 200, 'back on');
    },
  );

  await t.test(
    'self-reported usage: a customer meter prices a product only where the operator allows it',
    async (t) => {
      const own = (await made(A, 'POST', '/v1/meters', { name: 'mine', unit: 'u', aggregation: 'sum' })).id;
      t.equal((await made(ADMIN, 'GET', `/v1/products/${metered}`)).allow_customer_meters, true, 'allowed by default');
      t.equal(
        (await call(A, 'POST', '/v1/subscriptions', { items: [{ product_id: metered, meter_id: own }] })).status,
        201,
        'the seed’s model: the customer is its own emitter',
      );
      const strict = await product({ price: 0.01, pricing: 'metered', allow_customer_meters: false });
      for (const token of [A, ADMIN]) {
        const r = await call(token, 'POST', '/v1/subscriptions', {
          ...(token === ADMIN ? { customer_id: a!.id } : {}),
          items: [{ product_id: strict, meter_id: own }],
        });
        t.equal(r.status, 422, 'its own meter is refused');
        t.same(
          r.body.errors.map((e: any) => e.field),
          ['items[0].meter_id'],
        );
      }
      t.equal(
        (await call(A, 'POST', '/v1/subscriptions', { items: [{ product_id: strict, meter_id: seats }] })).status,
        201,
        'a deployment meter prices it',
      );
      const changed = await made(ADMIN, 'PATCH', `/v1/products/${strict}`, { allow_customer_meters: true });
      t.equal(changed.allow_customer_meters, true, 'the operator changes the flag');
    },
  );

  await t.test('dates are bounded: a trial of at most two years, periods within year 9999', async (t) => {
    const plan = await made(ADMIN, 'POST', '/v1/plans', {
      name: 'Plan',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: flat }],
    });
    for (const [token, extra] of [
      [A, {}],
      [ADMIN, { customer_id: a!.id }],
    ] as const) {
      const r = await call(token, 'POST', '/v1/subscriptions', {
        ...extra,
        plan_id: plan.id,
        trial_end: '9999-12-31T23:59:59Z',
      });
      t.equal(r.status, 422, 'trial_end 9999 → 422 (it made a period ending +010000-01-01)');
      t.same(
        r.body.errors.map((e: any) => e.field),
        ['trial_end'],
      );
    }
    const inTwoYears = new Date(Date.now() + 729 * 86_400_000).toISOString();
    const ok = await call(A, 'POST', '/v1/subscriptions', { plan_id: plan.id, trial_end: inTwoYears });
    t.equal(ok.status, 201, 'a trial just under two years');
    const tooLong = new Date(Date.now() + 731 * 86_400_000).toISOString();
    t.equal((await call(A, 'POST', '/v1/subscriptions', { plan_id: plan.id, trial_end: tooLong })).status, 422);
  });

  await t.test(
    'threshold sanity: a minimum per currency, and only the operator sets it on its subscription',
    async (t) => {
      const own = (body: Record<string, unknown>) => call(A, 'POST', '/v1/subscriptions', body);
      const low = await own({ items: [{ product_id: flat }], billing_threshold: { amount: 0.01 } });
      t.equal(low.status, 422, 'the issue’s 0.01 → 422');
      t.equal(low.body.code, 'threshold_below_minimum');
      t.same(low.body.errors, [{ field: 'billing_threshold.amount', message: 'must be at least 1 USD' }]);
      t.equal((await own({ items: [{ product_id: flat }], billing_threshold: { amount: 1 } })).status, 201, '1.00 USD');
      const yen = await product({ price: 1000, currency: 'JPY' });
      // A customer bills in one currency (price books): a yen subscription is another customer's.
      const [jp] = await createCustomers(api.url, ADMIN, 1, 'terms-jp');
      const JP = await customerToken(api.infra, jp!.accountId);
      const cheap = await call(JP, 'POST', '/v1/subscriptions', {
        items: [{ product_id: yen }],
        billing_threshold: { amount: 499 },
      });
      t.same([cheap.status, cheap.body.errors?.[0]?.message], [422, 'must be at least 500 JPY'], 'configured: JPY 500');
      const sub = await made(A, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }] });
      const patch = await call(A, 'PATCH', `/v1/subscriptions/${sub.id}`, { billing_threshold: { amount: 0.5 } });
      t.same([patch.status, patch.body.code], [422, 'threshold_below_minimum'], 'PATCH too');
      const theirs = await operatorMade();
      const byOperator = await call(ADMIN, 'PATCH', `/v1/subscriptions/${theirs.id}`, {
        billing_threshold: { amount: 0.99 },
      });
      t.same([byOperator.status, byOperator.body.code], [422, 'threshold_below_minimum'], 'the operator as well');
      t.equal(
        (await call(ADMIN, 'PATCH', `/v1/subscriptions/${theirs.id}`, { billing_threshold: { amount: 25 } })).status,
        200,
      );
      const byCustomer = await call(A, 'PATCH', `/v1/subscriptions/${theirs.id}`, {
        billing_threshold: { amount: 50 },
      });
      t.same([byCustomer.status, byCustomer.body.code], [403, 'operator_terms'], 'the customer may not');
      t.same((await made(ADMIN, 'GET', `/v1/subscriptions/${theirs.id}`)).billing_threshold, { amount: 25 });
    },
  );
});
