import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';

t.test('Idempotency-Key on POST', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const acct = await createTestAccount(api.infra);
  const other = await createTestAccount(api.infra);
  const operator = await createTestAccount(api.infra, { operator: true });

  async function post(path: string, opts: { token: string; key?: string; body?: unknown; raw?: string }) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${opts.token}`,
      'content-type': 'application/json',
    };
    if (opts.key !== undefined) headers['idempotency-key'] = opts.key;
    const res = await fetch(api.url + path, { method: 'POST', headers, body: opts.raw ?? JSON.stringify(opts.body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
  }
  const meterCount = async (accountId: string) =>
    (await pg.query('SELECT count(*)::int AS n FROM meters WHERE account_id = $1', [accountId])).rows[0].n as number;
  const meter = { name: 'requests', unit: 'req', aggregation: 'sum' };

  t.test('same key + same body → the first response replayed (status, body, Location); executed once', async (t) => {
    const first = await post('/v1/meters', { token: acct.tokens.write, key: 'create-meter-1', body: meter });
    t.equal(first.status, 201);
    t.equal(first.headers.get('idempotent-replayed'), null);
    const second = await post('/v1/meters', { token: acct.tokens.write, key: 'create-meter-1', body: meter });
    t.equal(second.status, 201);
    t.equal(second.text, first.text, 'byte-identical body');
    t.equal(second.headers.get('location'), first.headers.get('location'));
    t.equal(second.headers.get('content-type'), 'application/json');
    t.equal(second.headers.get('idempotent-replayed'), 'true');
    t.ok(second.headers.get('x-request-id'), 'the replay has its own request id');
    t.equal(await meterCount(acct.accountId), 1);
  });

  t.test('same data with other whitespace, key order and number spelling → replay', async (t) => {
    const a = await post('/v1/meters', {
      token: acct.tokens.write,
      key: 'spelling',
      raw: '{"name":"x","unit":"u","aggregation":"sum"}',
    });
    const b = await post('/v1/meters', {
      token: acct.tokens.write,
      key: 'spelling',
      raw: '{ "aggregation" : "sum",\n "unit":"u", "name":"x" }',
    });
    t.equal(b.status, 201);
    t.equal(b.body.id, a.body.id);
    const p1 = await post('/v1/products', {
      token: operator.tokens.admin,
      key: 'price',
      raw: '{"name":"p","price":0.10,"currency":"usd"}',
    });
    const p2 = await post('/v1/products', {
      token: operator.tokens.admin,
      key: 'price',
      raw: '{"name":"p","price":1e-1,"currency":"usd"}',
    });
    t.equal(p1.status, 201);
    t.equal(p2.text, p1.text, 'exact-decimal bodies replay byte for byte');
    t.ok(p2.text.includes('"price":0.1,'));
  });

  t.test('same key + different body → 409 idempotency_conflict, nothing executed', async (t) => {
    const before = await meterCount(acct.accountId);
    const res = await post('/v1/meters', {
      token: acct.tokens.write,
      key: 'create-meter-1',
      body: { ...meter, name: 'other' },
    });
    t.equal(res.status, 409);
    t.equal(res.body.code, 'idempotency_conflict');
    t.equal(res.body.errors[0].field, 'Idempotency-Key');
    t.equal(await meterCount(acct.accountId), before);
    // Numbers are compared exactly: values equal as doubles but different as decimals are different bodies.
    const a = await post('/v1/products', {
      token: operator.tokens.admin,
      key: 'big',
      raw: '{"name":"p","price":12345678901234567.1,"currency":"usd"}',
    });
    const b = await post('/v1/products', {
      token: operator.tokens.admin,
      key: 'big',
      raw: '{"name":"p","price":12345678901234567.2,"currency":"usd"}',
    });
    t.equal(a.status, 201);
    t.equal(b.status, 409);
  });

  t.test('keys are scoped per account and per route', async (t) => {
    const mine = await post('/v1/meters', { token: acct.tokens.write, key: 'shared-key', body: meter });
    const theirs = await post('/v1/meters', { token: other.tokens.write, key: 'shared-key', body: meter });
    t.equal(theirs.status, 201);
    t.not(theirs.body.id, mine.body.id, 'another account runs its own request and never sees my response');
    const product = await post('/v1/products', {
      token: operator.tokens.admin,
      key: 'k',
      body: { name: 'Flat', price: 1, currency: 'USD' },
    });
    const sub = await post('/v1/subscriptions', {
      token: acct.tokens.write,
      key: 'shared-key',
      body: { items: [{ product_id: product.body.id }] },
    });
    t.equal(sub.status, 201, 'the same key on another route is another key');
    t.match(sub.body.id, /^sub_/);
  });

  t.test('concurrent duplicates run once; the others wait and replay (or get 409 in progress)', async (t) => {
    const before = await meterCount(acct.accountId);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        post('/v1/meters', { token: acct.tokens.write, key: 'race', body: { ...meter, name: 'race' } }),
      ),
    );
    t.equal(await meterCount(acct.accountId), before + 1, 'exactly one meter created');
    const ok = results.filter((r) => r.status === 201);
    t.ok(ok.length >= 1);
    t.ok(
      ok.every((r) => r.text === ok[0]!.text),
      'every 201 is the same response',
    );
    t.ok(
      results.every((r) => r.status === 201 || (r.status === 409 && r.body.code === 'idempotency_in_progress')),
      results.map((r) => r.status).join(','),
    );
    t.equal(
      results.filter((r) => r.headers.get('idempotent-replayed') === null).length,
      1,
      'one execution, the rest replays',
    );
  });

  t.test('a 422 is the first response too, and replays as such', async (t) => {
    const bad = { name: 'x', unit: 'u', aggregation: 'p99' };
    const first = await post('/v1/meters', { token: acct.tokens.write, key: 'bad', body: bad });
    t.equal(first.status, 422);
    const second = await post('/v1/meters', { token: acct.tokens.write, key: 'bad', body: bad });
    t.equal(second.status, 422);
    t.equal(second.headers.get('content-type'), 'application/problem+json');
    t.equal(second.headers.get('idempotent-replayed'), 'true');
    t.same(second.body, first.body);
  });

  t.test('without a key every POST runs; a malformed key → 400', async (t) => {
    const before = await meterCount(acct.accountId);
    await post('/v1/meters', { token: acct.tokens.write, body: meter });
    await post('/v1/meters', { token: acct.tokens.write, body: meter });
    t.equal(await meterCount(acct.accountId), before + 2);
    for (const key of ['x'.repeat(256), 'has space', '']) {
      const res = await post('/v1/meters', { token: acct.tokens.write, key, body: meter });
      t.equal(res.status, 400, JSON.stringify(key.slice(0, 20)));
      t.equal(res.body.code, 'invalid_idempotency_key');
      t.equal(res.body.errors[0].field, 'Idempotency-Key');
    }
    t.equal(await meterCount(acct.accountId), before + 2);
    const max = await post('/v1/meters', { token: acct.tokens.write, key: 'k'.repeat(255), body: meter });
    t.equal(max.status, 201, '255 characters are fine');
  });

  t.test('keys expire after 24 h', async (t) => {
    const first = await post('/v1/meters', { token: acct.tokens.write, key: 'old', body: meter });
    await pg.query("UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE key = 'old'");
    const second = await post('/v1/meters', { token: acct.tokens.write, key: 'old', body: { ...meter, name: 'new' } });
    t.equal(second.status, 201);
    t.not(second.body.id, first.body.id, 'an expired key is free again');
    t.equal(second.headers.get('idempotent-replayed'), null);
  });

  t.test('a claim left by a crashed request is taken over after its lease; a live one is not', async (t) => {
    const body = JSON.stringify({ ...meter, name: 'crash' });
    // Stage a "running" claim exactly as a request that died mid-way would leave it: same fingerprint as the retry.
    const live = await post('/v1/meters', { token: acct.tokens.write, key: 'crash', raw: body });
    await pg.query(
      `UPDATE idempotency_keys SET state = 'running', locked_until = now() - interval '1 second', response_status = NULL, response_body = NULL
        WHERE key = 'crash'`,
    );
    await pg.query('DELETE FROM meters WHERE id = $1', [live.body.id]);
    const retry = await post('/v1/meters', { token: acct.tokens.write, key: 'crash', raw: body });
    t.equal(retry.status, 201);
    t.not(retry.body.id, live.body.id, 'the retry ran the operation');
    const replay = await post('/v1/meters', { token: acct.tokens.write, key: 'crash', raw: body });
    t.equal(replay.body.id, retry.body.id);
  });

  t.test('GET, PATCH and public routes ignore the header', async (t) => {
    const m = await post('/v1/meters', { token: acct.tokens.write, body: meter });
    const headers = {
      authorization: `Bearer ${acct.tokens.write}`,
      'content-type': 'application/json',
      'idempotency-key': 'patch',
    };
    const a = await fetch(`${api.url}/v1/meters/${m.body.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ name: 'a' }),
    });
    const b = await fetch(`${api.url}/v1/meters/${m.body.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ name: 'b' }),
    });
    t.equal(a.status, 200);
    t.equal(b.status, 200);
    t.equal(((await b.json()) as any).name, 'b');
    const rows = await pg.query("SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'patch'");
    t.equal(rows.rows[0].n, 0);
  });
});
