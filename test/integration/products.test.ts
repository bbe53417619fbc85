import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { Decimal } from '../../shared/money/decimal.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test('products', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const customer = await createTestAccount(api.infra);

  async function call(method: string, path: string, opts: { token?: string; body?: unknown; raw?: string } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined = opts.raw;
    if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(api.url + path, { method, headers, body: payload });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
  }
  const admin = operator.tokens.admin;
  const create = (body: unknown) => call('POST', '/v1/products', { token: admin, body });
  const createRaw = (raw: string) => call('POST', '/v1/products', { token: admin, raw });

  t.test('create → 201 with Location and the exact shape', async (t) => {
    const res = await create({ name: 'Pro plan', price: 19.99, currency: 'usd' });
    t.equal(res.status, 201);
    t.match(res.body.id, /^prod_[0-9A-Za-z]{22}$/);
    t.equal(res.headers.get('location'), `/v1/products/${res.body.id}`);
    t.same(Object.keys(res.body).sort(), [
      'allow_customer_meters',
      'created_at',
      'currency',
      'currency_options',
      'id',
      'name',
      'price',
      'pricing',
      'tax_rate_ids',
      'updated_at',
    ]);
    t.same(res.body.currency_options, {}, 'one currency: no other book');
    t.match(res.body, {
      name: 'Pro plan',
      price: 19.99,
      currency: 'USD',
      pricing: 'flat',
      allow_customer_meters: true,
    });
    t.match(res.body.created_at, ISO_MS);
    t.equal(res.body.updated_at, res.body.created_at);
    t.match(res.text, /"price":19\.99,/);
    const got = await call('GET', `/v1/products/${res.body.id}`, { token: customer.tokens.read });
    t.equal(got.status, 200);
    t.same(got.body, res.body, 'any account reads the catalog');
  });

  t.test('pricing metered is kept; currency any case → upper case', async (t) => {
    const res = await create({ name: 'API calls', price: 0.001, currency: 'eUr', pricing: 'metered' });
    t.equal(res.status, 201);
    t.equal(res.body.pricing, 'metered');
    t.equal(res.body.currency, 'EUR');
  });

  t.test('prices round-trip digit for digit (no float artefacts)', async (t) => {
    const cases: [string, string][] = [
      ['0.1', '0.1'],
      ['19.99', '19.99'],
      ['0.000000001', '0.000000001'],
      ['0.10', '0.1'],
      ['1e-9', '0.000000001'],
      ['1.5E2', '150'],
      ['0', '0'],
      ['100', '100'],
      ['12345678901234567890.123456789', '12345678901234567890.123456789'],
      ['99999999999999999999999999999.999999999', '99999999999999999999999999999.999999999'],
    ];
    for (const [sent, expected] of cases) {
      const res = await createRaw(`{"name":"p ${sent}","price":${sent},"currency":"JPY"}`);
      t.equal(res.status, 201, `price ${sent} accepted`);
      t.ok(
        res.text.includes(`"price":${expected},`),
        `create answers "price":${expected} for ${sent} (got ${res.text})`,
      );
      const got = await call('GET', `/v1/products/${res.body.id}`, { token: admin });
      t.ok(got.text.includes(`"price":${expected},`), `GET answers "price":${expected}`);
      const stored = await api.infra.pg.query('SELECT price::text AS p FROM products WHERE id = $1', [res.body.id]);
      t.ok(new Decimal(stored.rows[0].p).eq(expected), 'stored as NUMERIC with the same value');
    }
    const list = await call('GET', '/v1/products?per_page=100', { token: admin });
    for (const [, expected] of cases)
      t.ok(list.text.includes(`"price":${expected},`), `the list writes ${expected} exactly too`);
  });

  t.test('every validation error is a 422 naming the field', async (t) => {
    const cases: [string, unknown, string, RegExp?][] = [
      ['missing name', { price: 1, currency: 'USD' }, 'name', /required/],
      ['blank name', { name: '   ', price: 1, currency: 'USD' }, 'name', /blank/],
      ['name too long', { name: 'x'.repeat(201), price: 1, currency: 'USD' }, 'name'],
      ['missing price', { name: 'p', currency: 'USD' }, 'price', /required/],
      [
        'price as a string',
        { name: 'p', price: '19.99', currency: 'USD' },
        'price',
        /^must be a JSON number, not a string$/,
      ],
      ['negative price', { name: 'p', price: -1, currency: 'USD' }, 'price'],
      ['ten decimals', { name: 'p', price: 0.0000000001, currency: 'USD' }, 'price', /9 decimal/],
      ['missing currency', { name: 'p', price: 1 }, 'currency', /required/],
      // Every way a currency is wrong reads the same: the rule, never the pattern that checks its shape.
      [
        'unknown currency',
        { name: 'p', price: 1, currency: 'XYZ' },
        'currency',
        /^must be a 3-letter ISO 4217 currency code, such as USD$/,
      ],
      [
        'two-letter currency',
        { name: 'p', price: 1, currency: 'US' },
        'currency',
        /^must be a 3-letter ISO 4217 currency code, such as USD$/,
      ],
      [
        'numeric currency',
        { name: 'p', price: 1, currency: 840 },
        'currency',
        /^must be a 3-letter ISO 4217 currency code, such as USD, not a JSON number$/,
      ],
      ['unknown pricing', { name: 'p', price: 1, currency: 'USD', pricing: 'bulk' }, 'pricing', /flat/],
      ['unknown field', { name: 'p', price: 1, currency: 'USD', color: 'red' }, 'color', /not a known field/],
    ];
    for (const [what, body, field, message] of cases) {
      const res = await create(body);
      t.equal(res.status, 422, what);
      t.equal(res.body.code, 'validation_failed', what);
      const err = res.body.errors?.find((e: { field: string }) => e.field === field);
      t.ok(err, `${what}: names ${field} (got ${JSON.stringify(res.body.errors)})`);
      if (message && err) t.match(err.message, message, what);
    }
    const tooBig = await createRaw('{"name":"p","price":1e29,"currency":"USD"}');
    t.equal(tooBig.status, 422);
    t.equal(tooBig.body.errors[0].field, 'price');
    const noBody = await call('POST', '/v1/products', { token: admin });
    t.equal(noBody.status, 422);
    const count = await api.infra.pg.query("SELECT count(*)::int AS n FROM products WHERE name = 'p'");
    t.equal(count.rows[0].n, 0, 'nothing invalid was stored');
  });

  t.test('get: unknown and malformed ids → 404', async (t) => {
    for (const id of ['prod_doesnotexist0000000000', 'nonsense', 'mtr_abc']) {
      const res = await call('GET', `/v1/products/${id}`, { token: admin });
      t.equal(res.status, 404, id);
      t.equal(res.body.code, 'not_found');
    }
  });

  t.test('update name and price; currency and pricing are fixed', async (t) => {
    const p = (await create({ name: 'Basic', price: 5, currency: 'USD' })).body;
    const renamed = await call('PATCH', `/v1/products/${p.id}`, { token: admin, body: { name: 'Basic 2' } });
    t.equal(renamed.status, 200);
    t.match(renamed.body, {
      id: p.id,
      name: 'Basic 2',
      price: 5,
      currency: 'USD',
      pricing: 'flat',
      created_at: p.created_at,
    });
    t.ok(Date.parse(renamed.body.updated_at) >= Date.parse(p.updated_at));
    const repriced = await call('PATCH', `/v1/products/${p.id}`, { token: admin, raw: '{"price":0.30}' });
    t.equal(repriced.status, 200);
    t.ok(repriced.text.includes('"price":0.3,'), repriced.text);
    t.equal(repriced.body.name, 'Basic 2');
    const both = await call('PATCH', `/v1/products/${p.id}`, {
      token: admin,
      body: { name: 'Basic 3', price: 0.000000001 },
    });
    t.ok(both.text.includes('"price":0.000000001,'));
    t.equal(both.body.name, 'Basic 3');

    for (const [body, field] of [
      [{ currency: 'EUR' }, 'currency'],
      [{ pricing: 'metered' }, 'pricing'],
      [{ price: -0.5 }, 'price'],
      [{ price: 1.0000000001 }, 'price'],
      [{ name: '' }, 'name'],
      [{ name: '  ' }, 'name'],
      [{}, ''],
    ] as [unknown, string][]) {
      const res = await call('PATCH', `/v1/products/${p.id}`, { token: admin, body });
      t.equal(res.status, 422, JSON.stringify(body));
      t.equal(res.body.errors[0].field, field, JSON.stringify(body));
    }
    const missing = await call('PATCH', '/v1/products/prod_doesnotexist0000000000', {
      token: admin,
      body: { name: 'x' },
    });
    t.equal(missing.status, 404);
  });

  t.test('delete → 204, then gone; unknown → 404', async (t) => {
    const p = (await create({ name: 'Temp', price: 1, currency: 'USD' })).body;
    const del = await call('DELETE', `/v1/products/${p.id}`, { token: admin });
    t.equal(del.status, 204);
    t.equal(del.text, '');
    t.equal((await call('GET', `/v1/products/${p.id}`, { token: admin })).status, 404);
    t.equal((await call('DELETE', `/v1/products/${p.id}`, { token: admin })).status, 404);
    t.equal((await call('PATCH', `/v1/products/${p.id}`, { token: admin, body: { name: 'x' } })).status, 404);
    const list = await call('GET', '/v1/products?per_page=100', { token: admin });
    t.notOk(
      list.body.data.some((x: { id: string }) => x.id === p.id),
      'not listed',
    );
  });

  t.test('delete a product used by an active subscription → 409 product_in_use; after cancel → 204', async (t) => {
    const p = (await create({ name: 'Team', price: 49, currency: 'USD' })).body;
    const sub = await call('POST', '/v1/subscriptions', {
      token: customer.tokens.write,
      body: { items: [{ product_id: p.id }] },
    });
    t.equal(sub.status, 201);
    const del = await call('DELETE', `/v1/products/${p.id}`, { token: admin });
    t.equal(del.status, 409);
    t.equal(del.body.code, 'product_in_use');
    t.equal((await call('GET', `/v1/products/${p.id}`, { token: admin })).status, 200, 'still there');
    t.equal(
      (
        await call('PATCH', `/v1/subscriptions/${sub.body.id}`, {
          token: customer.tokens.write,
          body: { status: 'canceled' },
        })
      ).status,
      200,
    );
    t.equal((await call('DELETE', `/v1/products/${p.id}`, { token: admin })).status, 204);
    const after = await call('GET', `/v1/subscriptions/${sub.body.id}`, { token: customer.tokens.read });
    t.same(after.body.items, [{ product_id: p.id, meter_id: null }], 'the canceled subscription still names it');
  });

  t.test('list: pagination defaults, totals, newest first, bounds', async (t) => {
    await api.infra.pg.query('DELETE FROM subscription_items');
    await api.infra.pg.query('DELETE FROM products');
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await create({ name: `P${i}`, price: i, currency: 'USD' })).body.id);
    const newestFirst = [...ids].reverse();

    const first = await call('GET', '/v1/products', { token: customer.tokens.read });
    t.equal(first.status, 200);
    t.same(Object.keys(first.body).sort(), ['data', 'pagination']);
    t.same(first.body.pagination, { page: 1, per_page: 20, total: 23 });
    t.same(
      first.body.data.map((p: { id: string }) => p.id),
      newestFirst.slice(0, 20),
    );
    const second = await call('GET', '/v1/products?page=2', { token: customer.tokens.read });
    t.same(second.body.pagination, { page: 2, per_page: 20, total: 23 });
    t.same(
      second.body.data.map((p: { id: string }) => p.id),
      newestFirst.slice(20),
    );
    const small = await call('GET', '/v1/products?page=3&per_page=5', { token: customer.tokens.read });
    t.same(
      small.body.data.map((p: { id: string }) => p.id),
      newestFirst.slice(10, 15),
    );
    const beyond = await call('GET', '/v1/products?page=9', { token: customer.tokens.read });
    t.same(beyond.body, { data: [], pagination: { page: 9, per_page: 20, total: 23 } });
    const max = await call('GET', '/v1/products?per_page=100', { token: customer.tokens.read });
    t.equal(max.body.data.length, 23);

    // Same created_at: ties are broken by id, descending, and the order is stable across pages.
    await api.infra.pg.query("UPDATE products SET created_at = '2026-01-01T00:00:00Z'");
    const byId = [...ids].sort().reverse();
    const p1 = await call('GET', '/v1/products?per_page=10', { token: admin });
    const p2 = await call('GET', '/v1/products?per_page=10&page=2', { token: admin });
    const p3 = await call('GET', '/v1/products?per_page=10&page=3', { token: admin });
    t.same(
      [...p1.body.data, ...p2.body.data, ...p3.body.data].map((p: { id: string }) => p.id),
      byId,
    );

    for (const [qs, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=abc', 'page'],
      ['per_page=1.5', 'per_page'],
      ['sort=name', 'sort'],
      // Integers are decimal digits and nothing else (issue 24): no hex, exponent, sign or padding.
      ['page=0x10', 'page'],
      ['page=1e1', 'page'],
      ['page=%2B2', 'page'],
      ['per_page=%2010', 'per_page'],
      ['per_page=', 'per_page'],
    ]) {
      const res = await call('GET', `/v1/products?${qs}`, { token: admin });
      t.equal(res.status, 422, qs);
      t.equal(res.body.errors[0].field, field, qs);
    }
    // A single-valued parameter given twice: which one was meant is not ours to guess.
    const twice = await call('GET', '/v1/products?per_page=10&per_page=20', { token: admin });
    t.equal(twice.status, 400);
    t.equal(twice.body.code, 'repeated_parameter');
    t.same(twice.body.errors, [{ field: 'per_page', message: 'must be given at most once' }]);
  });
});
