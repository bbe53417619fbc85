import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, cardBody, usageRecord } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';

/**
 * Tenant isolation in operator mode (docs/design.md §6; isolation.test.ts covers accounts' own resources): a
 * customer's token never sees or writes another customer's data, whatever it names — the operator's routes
 * (customers, sign-ins, acting for a customer with `customer_id`, deployment webhooks) refuse it, a deployment meter
 * shows it its own usage only, and a record naming another customer is refused like an unknown one.
 */
t.test('isolation between the customers of a deployment', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const operator = await createTestAccount(api.infra, { operator: true });
  const [a, b] = await createCustomers(api.url, operator.tokens.admin, 2, 'iso');
  const tokens = {
    a: await customerToken(api.infra, a!.accountId),
    bRead: await customerToken(api.infra, b!.accountId, ['read']),
    bWrite: await customerToken(api.infra, b!.accountId, ['read', 'write']),
  };
  const meter = await deploymentMeter(api.url, operator.tokens.admin, { name: 'shared', aggregation: 'sum' });
  const product = (
    await callJson(api.url, operator.tokens.admin, 'POST', '/v1/products', { name: 'Plan', price: 9, currency: 'USD' })
  ).body.id;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  await call(operator.tokens.admin, 'POST', `/v1/meters/${meter.id}/usage`, [
    { ...usageRecord(7), customer: a!.externalId },
    { ...usageRecord(5), customer: b!.externalId },
  ]);
  const usage = (token: string, q = '') => call(token, 'GET', `/v1/meters/${meter.id}/usage?window=none${q}`);
  await waitUntil(async () => (await usage(operator.tokens.admin)).body.count === 2, 'both records stored');

  const operatorRoutes: [string, string, unknown?][] = [
    ['GET', '/v1/customers'],
    ['GET', `/v1/customers?external_id=${a!.externalId}`],
    ['POST', '/v1/customers', { name: 'mine', external_id: 'b-made' }],
    ['GET', `/v1/customers/${a!.id}`],
    ['PATCH', `/v1/customers/${a!.id}`, { external_id: 'taken-over' }],
    ['GET', `/v1/customers/${a!.id}/users`],
    ['POST', `/v1/customers/${a!.id}/users`, { email: 'intruder@b.example' }],
    ['PATCH', `/v1/meters/${meter.id}`, { name: 'renamed by B' }],
    ['POST', '/v1/meters', { name: 'b-deployment', unit: 'u', aggregation: 'sum', scope: 'deployment' }],
    ['GET', `/v1/subscriptions?customer_id=${a!.id}`],
    ['GET', `/v1/billing/invoices?customer_id=${a!.id}`],
    ['GET', `/v1/billing/credits?customer_id=${a!.id}`],
    ['POST', '/v1/subscriptions', { customer_id: a!.id, items: [{ product_id: product }] }],
    ['POST', '/v1/webhooks', { url: 'https://example.com/all', events: ['invoice.created'], scope: 'deployment' }],
  ];
  for (const [method, path, body] of operatorRoutes) {
    t.test(`B: ${method} ${path} → 403, naming nothing of A`, async (t) => {
      for (const token of [tokens.bRead, tokens.bWrite]) {
        const r = await call(token, method, path, body);
        t.equal(r.status, 403);
        t.equal(r.body.code, 'insufficient_scope');
        t.notOk(JSON.stringify(r.body).includes(a!.accountId), 'the answer names nothing of A');
      }
    });
  }

  t.test('B reads its own usage of the deployment meter, whatever it filters or groups by', async (t) => {
    t.equal((await usage(tokens.bRead)).body.value, 5);
    t.equal((await usage(tokens.bRead, `&filter[customer]=${a!.externalId}`)).body.count, 0);
    const grouped = await usage(tokens.bRead, '&group_by=customer');
    t.same(
      grouped.body.groups.map((g: any) => [g.dimensions.customer, g.value]),
      [[b!.externalId, 5]],
    );
    t.equal((await usage(tokens.a)).body.value, 7, 'and A its own');
  });

  t.test('B cannot record usage for A, by external id or customer id', async (t) => {
    for (const naming of [{ customer: a!.externalId }, { customer_id: a!.id }]) {
      const r = await call(tokens.bWrite, 'POST', `/v1/meters/${meter.id}/usage`, { ...usageRecord(1000), ...naming });
      t.equal(r.status, 422);
      t.equal(r.body.code, 'unknown_customer');
      t.notOk(JSON.stringify(r.body).includes(a!.accountId));
    }
    const unknown = await call(tokens.bWrite, 'POST', `/v1/meters/${meter.id}/usage`, {
      ...usageRecord(1000),
      customer: 'no-such-customer',
    });
    t.same(
      unknown.body.errors,
      [{ field: 'customer', message: 'must be this token’s own customer' }],
      'an unknown customer reads the same',
    );
    t.equal((await usage(tokens.a)).body.value, 7, 'A’s usage is unchanged');
  });

  t.test('nothing B tried changed A', async (t) => {
    const got = await call(operator.tokens.admin, 'GET', `/v1/customers/${a!.id}`);
    t.equal(got.body.external_id, a!.externalId);
    t.equal((await call(operator.tokens.admin, 'GET', `/v1/customers/${a!.id}/users`)).body.pagination.total, 0);
    t.equal((await call(operator.tokens.admin, 'GET', `/v1/meters/${meter.id}`)).body.name, 'shared');
    const subs = await call(operator.tokens.admin, 'GET', `/v1/subscriptions?customer_id=${a!.id}`);
    t.equal(subs.body.pagination.total, 0, 'A has no subscription B made');
    t.equal((await call(tokens.bRead, 'GET', '/v1/webhooks')).body.pagination.total, 0, 'B made no webhook');
  });

  t.test('the operator reads and changes a customer’s subscription by id; another customer cannot', async (t) => {
    const made = await call(operator.tokens.admin, 'POST', '/v1/subscriptions', {
      customer_id: a!.id,
      items: [{ product_id: product }],
    });
    t.equal(made.status, 201);
    const path = `/v1/subscriptions/${made.body.id}`;
    const got = await call(operator.tokens.admin, 'GET', path);
    t.equal(got.status, 200, 'the operator reads it');
    t.equal(got.body.id, made.body.id);
    const changed = await call(operator.tokens.admin, 'PATCH', path, { billing_threshold: { amount: 50 } });
    t.equal(changed.status, 200, 'the operator sets a billing threshold on it');
    t.same(changed.body.billing_threshold, { amount: 50 });
    t.equal((await call(tokens.a, 'GET', path)).body.billing_threshold.amount, 50, 'A sees the threshold');
    for (const [method, body] of [
      ['GET'],
      ['PATCH', { billing_threshold: null }],
      ['PATCH', { status: 'canceled' }],
    ] as const) {
      const r = await call(tokens.bWrite, method, path, body);
      t.equal(r.status, 404, `B: ${method} ${JSON.stringify(body ?? {})} → 404`);
      t.notOk(JSON.stringify(r.body).includes(a!.accountId));
    }
    const after = await call(operator.tokens.admin, 'GET', path);
    t.same([after.body.status, after.body.billing_threshold], ['active', { amount: 50 }], 'A’s subscription unchanged');
  });

  // Issue 49 (sec-terms): what the operator made for A is the operator's; B's portal settings are the operator's too.
  t.test('a customer changes neither the terms the operator set for it nor the portal settings', async (t) => {
    const made = await call(operator.tokens.admin, 'POST', '/v1/subscriptions', {
      customer_id: a!.id,
      items: [{ product_id: product }],
    });
    const path = `/v1/subscriptions/${made.body.id}`;
    for (const body of [
      { items: [{ product_id: product, quantity: 2 }] },
      { status: 'canceled' },
      { billing_threshold: { amount: 5 } },
    ]) {
      const own = await call(tokens.a, 'PATCH', path, body);
      t.same([own.status, own.body.code], [403, 'operator_terms'], `A: ${JSON.stringify(body)} → 403 operator_terms`);
      const other = await call(tokens.bWrite, 'PATCH', path, body);
      t.equal(other.status, 404, `B: ${JSON.stringify(body)} → 404, as before`);
    }
    const r = await call(tokens.bWrite, 'PATCH', '/v1/portal_settings', { self_serve_subscriptions: false });
    t.same([r.status, r.body.code], [403, 'insufficient_scope'], 'B: PATCH /v1/portal_settings → 403');
    const read = await call(tokens.bWrite, 'GET', '/v1/portal_settings');
    t.equal(read.body.self_serve_subscriptions, true, 'B reads what customers may do, and changed nothing');
    const after = await call(operator.tokens.admin, 'GET', path);
    t.same(
      [after.body.status, after.body.items, after.body.billing_threshold],
      ['active', [{ product_id: product, meter_id: null }], null],
    );
    t.equal((await call(operator.tokens.admin, 'GET', '/v1/portal_settings')).body.self_serve_subscriptions, true);
  });
  t.test(
    'the operator changes A’s card and pays A’s invoice by id, as A can; B gets 404 and changes nothing',
    async (t) => {
      const sub = await call(operator.tokens.admin, 'POST', '/v1/subscriptions', {
        customer_id: a!.id,
        items: [{ product_id: product }],
      });
      const first = (await call(tokens.a, 'POST', '/v1/billing/payment-methods', cardBody())).body;
      const second = (await call(tokens.a, 'POST', '/v1/billing/payment-methods', cardBody('5555555555554444'))).body;
      t.equal(first.is_default, true, 'A’s first card is its default');
      const invoice = await insertInvoice(api.infra.pg, {
        accountId: a!.accountId,
        customerId: a!.id,
        subscriptionId: sub.body.id,
        amount: '9',
        periodStart: '2026-01-01',
        periodEnd: '2026-01-31',
        lines: [{ product_id: product, description: 'Plan', quantity: '1', unit_price: '9', amount: '9' }],
      });
      const makeDefault = `/v1/billing/payment-methods/${second.id}/default`;
      const pay = `/v1/billing/invoices/${invoice}/pay`;
      for (const [method, path] of [
        ['PATCH', makeDefault],
        ['POST', pay],
      ] as const) {
        const r = await call(tokens.bWrite, method, path);
        t.equal(r.status, 404, `B: ${method} → 404`);
        t.notOk(JSON.stringify(r.body).includes(a!.accountId));
      }
      const defaults = async () =>
        (await call(tokens.a, 'GET', '/v1/billing/payment-methods')).body.data
          .filter((m: any) => m.is_default)
          .map((m: any) => m.id);
      t.same(await defaults(), [first.id], 'B changed nothing');
      t.equal((await call(tokens.a, 'GET', `/v1/billing/invoices/${invoice}`)).body.status, 'open');

      const defaulted = await call(operator.tokens.admin, 'PATCH', makeDefault);
      t.equal(defaulted.status, 200, 'the operator makes A’s second card the default');
      t.same(await defaults(), [second.id], 'A sees it');
      const paid = await call(operator.tokens.admin, 'POST', pay);
      t.equal(paid.status, 200, 'the operator pays A’s invoice');
      t.equal(paid.body.status, 'paid');
      t.equal((await call(tokens.a, 'GET', `/v1/billing/invoices/${invoice}`)).body.status, 'paid', 'A sees it paid');
    },
  );
});
