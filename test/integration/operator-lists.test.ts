import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';

/**
 * Issue 48 item 2: an operator sees every customer's invoices and subscriptions at once (`scope=deployment`), narrowed
 * by customer, status and the period an invoice bills; a customer's token never does (403), and its own lists stay
 * its own. Every subscription names its customer (`customer_id`), as invoices do.
 */
t.test('deployment-wide lists of invoices and subscriptions', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra, { name: 'Alpha Co' });
  const b = await createTestAccount(api.infra, { name: 'Beta Co' });
  const call = (token: string, path: string) => callJson(api.url, token, 'GET', path);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await callJson(api.url, token, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const plan = await made(operator.tokens.admin, 'POST', '/v1/products', { name: 'Plan', price: 10, currency: 'USD' });
  const subA = await made(operator.tokens.admin, 'POST', '/v1/subscriptions', {
    customer_id: a.customerId,
    items: [{ product_id: plan.id }],
  });
  const subB = await made(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] });
  const invoice = (acc: typeof a, sub: string, start: string, end: string, status: 'open' | 'paid') =>
    insertInvoice(api.infra.pg, {
      accountId: acc.accountId,
      customerId: acc.customerId,
      subscriptionId: sub,
      amount: '10',
      periodStart: start,
      periodEnd: end,
      status,
      ...(status === 'paid' ? { paidAt: `${end}T02:00:00Z` } : {}),
    });
  const aSep = await invoice(a, subA.id, '2026-09-01', '2026-09-30', 'paid');
  const aOct = await invoice(a, subA.id, '2026-10-01', '2026-10-31', 'open');
  const bOct = await invoice(b, subB.id, '2026-10-01', '2026-10-31', 'paid');
  const ids = (body: { data: { id: string }[] }) => body.data.map((x) => x.id).sort();

  await t.test('invoices: every customer’s, then narrowed by customer, status and period', async (t) => {
    const all = await call(operator.tokens.admin, '/v1/billing/invoices?scope=deployment');
    t.equal(all.status, 200);
    t.same(ids(all.body), [aSep, aOct, bOct].sort(), 'both customers’ invoices');
    t.equal(all.body.pagination.total, 3);
    t.same(
      all.body.data.map((i: { customer_id: string }) => i.customer_id).sort(),
      [a.customerId, a.customerId, b.customerId].sort(),
      'each names its customer',
    );
    const cases: [string, string[]][] = [
      [`&customer_id=${a.customerId}`, [aSep, aOct]],
      ['&status=paid', [aSep, bOct]],
      ['&period_from=2026-10-01', [aOct, bOct]],
      ['&period_to=2026-09-30', [aSep]],
      ['&period_from=2026-10-15&period_to=2026-10-15', [aOct, bOct]],
      [`&customer_id=${b.customerId}&status=open`, []],
    ];
    for (const [q, expected] of cases) {
      const r = await call(operator.tokens.admin, `/v1/billing/invoices?scope=deployment${q}`);
      t.equal(r.status, 200, q);
      t.same(ids(r.body), expected.sort(), q);
    }
    const bad = await call(operator.tokens.admin, '/v1/billing/invoices?scope=deployment&period_from=october');
    t.equal(bad.status, 422);
    t.ok(
      bad.body.errors.some((e: { field: string }) => e.field === 'period_from'),
      JSON.stringify(bad.body),
    );
    t.same(ids((await call(operator.tokens.admin, '/v1/billing/invoices')).body), [], 'without scope: its own');
  });

  await t.test('subscriptions: every customer’s, each naming its customer', async (t) => {
    const all = await call(operator.tokens.admin, '/v1/subscriptions?scope=deployment');
    t.equal(all.status, 200);
    t.same(ids(all.body), [subA.id, subB.id].sort());
    const byId = new Map(all.body.data.map((s: { id: string; customer_id: string }) => [s.id, s.customer_id]));
    t.equal(byId.get(subA.id), a.customerId);
    t.equal(byId.get(subB.id), b.customerId);
    t.same(
      ids((await call(operator.tokens.admin, `/v1/subscriptions?scope=deployment&customer_id=${b.customerId}`)).body),
      [subB.id],
    );
    t.equal(subA.customer_id, a.customerId, 'the create answer names it too');
    t.equal((await call(b.tokens.read, `/v1/subscriptions/${subB.id}`)).body.customer_id, b.customerId);
  });

  await t.test('a customer’s token: 403 for the deployment’s lists, its own otherwise', async (t) => {
    for (const token of [a.tokens.read, a.tokens.write, a.tokens.admin])
      for (const path of ['/v1/billing/invoices?scope=deployment', '/v1/subscriptions?scope=deployment']) {
        const r = await call(token, path);
        t.equal(r.status, 403, path);
        t.equal(r.body.code, 'insufficient_scope', path);
      }
    t.same(ids((await call(a.tokens.read, '/v1/billing/invoices')).body), [aSep, aOct].sort(), 'its own invoices');
    t.same(ids((await call(b.tokens.read, '/v1/subscriptions')).body), [subB.id], 'its own subscriptions');
    const other = await call(a.tokens.read, `/v1/billing/invoices?scope=deployment&customer_id=${b.customerId}`);
    t.equal(other.status, 403, 'naming another customer is no way round it');
  });
});
