import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';

/**
 * Tenant isolation (DESIGN §6): account B gets 404 for every one of account A's resources, by any method,
 * and never sees them in lists; nothing B does changes them. Products are the exception by design: the
 * catalog is shared by the deployment, so B reads A's operator's products.
 */
t.test('isolation between accounts', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);

  async function call(token: string, method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(api.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  const flat = (await call(operator.tokens.admin, 'POST', '/v1/products', { name: 'Flat', price: 10, currency: 'USD' })).body.id;
  const metered = (await call(operator.tokens.admin, 'POST', '/v1/products', { name: 'Metered', price: 0.01, currency: 'USD', pricing: 'metered' })).body.id;
  const aMeter = (await call(a.tokens.write, 'POST', '/v1/meters', { name: 'A meter', unit: 'u', aggregation: 'sum' })).body;
  const aSub = (await call(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }, { product_id: metered, meter_id: aMeter.id }] })).body;
  const bMeter = (await call(b.tokens.write, 'POST', '/v1/meters', { name: 'B meter', unit: 'u', aggregation: 'sum' })).body;
  const bSub = (await call(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }] })).body;

  const matrix: [string, string, unknown?][] = [
    ['GET', `/v1/meters/${aMeter.id}`],
    ['PATCH', `/v1/meters/${aMeter.id}`, { status: 'inactive' }],
    ['PATCH', `/v1/meters/${aMeter.id}`, { name: 'taken over' }],
    ['GET', `/v1/subscriptions/${aSub.id}`],
    ['PATCH', `/v1/subscriptions/${aSub.id}`, { status: 'canceled' }],
    ['PATCH', `/v1/subscriptions/${aSub.id}`, { items: [{ product_id: flat }] }],
  ];
  for (const [method, path, body] of matrix) {
    t.test(`B: ${method} ${path.replace(/_[0-9A-Za-z]{22}/, '_…')} → 404`, async (t) => {
      for (const scope of ['read', 'write'] as const) {
        const res = await call(b.tokens[scope], method, path, body);
        if (method !== 'GET' && scope === 'read') {
          t.equal(res.status, 403, 'a read token is refused before any lookup');
          continue;
        }
        t.equal(res.status, 404, `${scope} token`);
        t.equal(res.body.code, 'not_found');
        t.notOk(JSON.stringify(res.body).includes(a.accountId), 'the answer names nothing of A');
      }
    });
  }

  t.test('B cannot use A’s meter in a subscription', async (t) => {
    const res = await call(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: metered, meter_id: aMeter.id }] });
    t.equal(res.status, 422);
    t.same(res.body.errors, [{ field: 'items[0].meter_id', message: 'no such meter' }]);
    const patch = await call(b.tokens.write, 'PATCH', `/v1/subscriptions/${bSub.id}`, { items: [{ product_id: metered, meter_id: aMeter.id }] });
    t.equal(patch.status, 422);
  });

  t.test('lists never leak', async (t) => {
    const bMeters = await call(b.tokens.read, 'GET', '/v1/meters?per_page=100');
    t.same(bMeters.body.data.map((m: { id: string }) => m.id), [bMeter.id]);
    t.equal(bMeters.body.pagination.total, 1);
    for (const status of ['active', 'inactive']) {
      const r = await call(b.tokens.read, 'GET', `/v1/meters?status=${status}`);
      t.notOk(r.body.data.some((m: { id: string }) => m.id === aMeter.id), `status=${status}`);
    }
    const bSubs = await call(b.tokens.read, 'GET', '/v1/subscriptions?per_page=100');
    t.same(bSubs.body.data.map((s: { id: string }) => s.id), [bSub.id]);
    t.equal(bSubs.body.pagination.total, 1);
    const aMeters = await call(a.tokens.read, 'GET', '/v1/meters');
    t.same(aMeters.body.data.map((m: { id: string }) => m.id), [aMeter.id]);
    const aSubs = await call(a.tokens.read, 'GET', '/v1/subscriptions');
    t.same(aSubs.body.data.map((s: { id: string }) => s.id), [aSub.id]);
  });

  t.test('nothing B tried changed A’s resources', async (t) => {
    const m = await call(a.tokens.read, 'GET', `/v1/meters/${aMeter.id}`);
    t.same(m.body, aMeter);
    const s = await call(a.tokens.read, 'GET', `/v1/subscriptions/${aSub.id}`);
    t.same(s.body, aSub);
    const events = await api.infra.pg.query("SELECT account_id FROM outbox_events WHERE data->>'subscription_id' = $1", [aSub.id]);
    t.same(events.rows, [{ account_id: a.accountId }], 'only A’s creation event');
  });

  t.test('the product catalog is shared: B reads the same products', async (t) => {
    const fromA = await call(a.tokens.read, 'GET', '/v1/products');
    const fromB = await call(b.tokens.read, 'GET', '/v1/products');
    t.same(fromB.body, fromA.body);
    t.equal((await call(b.tokens.read, 'GET', `/v1/products/${flat}`)).status, 200);
  });
});
