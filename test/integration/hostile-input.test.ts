import t from 'tap';
import { createServer, connect, type Socket } from 'node:net';
import { freePort, isolatedConfig, testInfra } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { createPgPool } from '../../shared/clients/postgres.js';

// Inputs from issue 16 that made the api answer 500 (and log a full error) instead of a precise problem.
async function call(base: string, method: string, path: string, auth: { authorization: string }, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

t.test('hostile ids, pages and names get 4xx problems, never a 500', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const acct = await createTestAccount(api.infra);

  for (const path of ['/v1/products?page=1e300', '/v1/meters?page=1e300', '/v1/products?page=99999999999']) {
    const res = await call(api.url, 'GET', path, acct.auth.read);
    t.equal(res.status, 422, `${path} → 422`);
    t.same(
      res.body.errors.map((e: any) => e.field),
      ['page'],
    );
  }
  t.equal(
    (await call(api.url, 'GET', '/v1/products?page=1000000', acct.auth.read)).status,
    200,
    'the last allowed page is an empty page',
  );

  for (const path of ['/v1/meters/mtr_%00', '/v1/products/prod_%00abc', '/v1/billing/payment-methods/pm_%00']) {
    const res = await call(api.url, 'GET', path, acct.auth.read);
    t.equal(res.status, 404, `${path} → 404`);
    t.equal(res.body.code, 'not_found');
  }
  const query = await call(api.url, 'GET', '/v1/meters?status=active%00', acct.auth.read);
  t.equal(query.status, 422, 'a NUL in a query value → 422');

  const named = await call(
    api.url,
    'POST',
    '/v1/meters',
    acct.auth.write,
    '{"name": "api\\u0000calls", "unit": "calls", "aggregation": "sum"}',
  );
  t.equal(named.status, 422, 'a NUL in a meter name → 422');
  t.same(named.body.errors, [{ field: 'name', message: 'must not contain NUL characters' }]);
  const nested = await call(api.url, 'POST', '/v1/billing/payment-methods', acct.auth.write, {
    type: 'card',
    card: { number: '4242424242424242\u0000', exp_month: 1, exp_year: 2099, cvc: '123' },
  });
  t.equal(nested.status, 422);
  t.same(
    nested.body.errors.map((e: any) => e.field),
    ['card.number'],
  );
  const meters = await api.infra.pg.query('SELECT count(*)::int AS n FROM meters WHERE account_id = $1', [
    acct.accountId,
  ]);
  t.equal(meters.rows[0].n, 0, 'nothing was written');
});

t.test('/oauth/jwks is served from memory, not a Postgres query per request', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  let queries = 0;
  const counting = new Proxy(infra.pg, {
    get(target, prop, receiver) {
      if (prop === 'query')
        return (...args: unknown[]) => (queries++, (target.query as (...a: unknown[]) => unknown)(...args));
      return Reflect.get(target, prop, receiver);
    },
  });
  const keys = new SigningKeys(counting, config.SECRET_KEY);
  await keys.load();
  const first = await keys.jwks();
  t.equal(first.keys.length, 1);
  queries = 0;
  const again = await Promise.all(Array.from({ length: 50 }, () => keys.jwks()));
  t.ok(
    again.every((k) => k.keys[0]!.kid === first.keys[0]!.kid),
    'the same key set',
  );
  t.equal(queries, 0, '50 requests, no query');
});

/** A TCP relay to the real Postgres that the test can cut, as a network partition or a crash would. */
async function relay(target: URL): Promise<{ url: string; cut(): Promise<void> }> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

t.test('Postgres unreachable → 503 with Retry-After, not 500', async (t) => {
  const config = await isolatedConfig(t);
  const link = await relay(new URL(config.DATABASE_URL));
  t.teardown(() => link.cut());
  const api = await startApi(t, { ...config, DATABASE_URL: link.url });
  const acct = await createTestAccount(api.infra);
  t.equal((await call(api.url, 'GET', '/v1/meters', acct.auth.read)).status, 200);
  await link.cut();
  for (const [method, path, body] of [
    ['GET', '/v1/meters'],
    ['POST', '/v1/meters', { name: 'x', unit: 'calls', aggregation: 'sum' }],
  ] as const) {
    const res = await call(api.url, method, path, method === 'GET' ? acct.auth.read : acct.auth.write, body);
    t.equal(res.status, 503, `${method} ${path} → 503`);
    t.equal(res.body.code, 'unavailable');
    t.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
  }
});

t.test('statements time out on the server', async (t) => {
  const config = await isolatedConfig(t);
  const pool = createPgPool(config.DATABASE_URL, 1);
  t.teardown(() => pool.end());
  const r = await pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
  t.equal(r.rows[0]!.statement_timeout, '30s');
});
