import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';

function client(base: string) {
  return async (method: string, path: string, opts: { auth?: { authorization: string }; body?: unknown } = {}) => {
    const headers: Record<string, string> = { ...(opts.auth ?? {}) };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

const address = { line1: '1 Infinite Loop', city: 'Cupertino', state: 'CA', zip: '95014' };

t.test('billing information', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const call = client(api.url);
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);

  t.test('a new account has its customer id and nothing else yet', async (t) => {
    const res = await call('GET', '/v1/billing', { auth: a.auth.read });
    t.equal(res.status, 200);
    t.same(res.body, { customer_id: a.customerId, payment_method: null, billing_address: null });
    t.match(a.customerId, /^cus_/);
  });

  t.test('PATCH sets the address and returns the billing information', async (t) => {
    const res = await call('PATCH', '/v1/billing', { auth: a.auth.write, body: { billing_address: address } });
    t.equal(res.status, 200);
    t.same(res.body, { customer_id: a.customerId, payment_method: null, billing_address: address });
    t.same((await call('GET', '/v1/billing', { auth: a.auth.read })).body, res.body);
  });

  t.test('PATCH replaces the whole address; 200-character lines are fine', async (t) => {
    const next = { line1: 'x'.repeat(200), city: 'Zürich', state: 'ZH', zip: '8001' };
    const res = await call('PATCH', '/v1/billing', { auth: a.auth.write, body: { billing_address: next } });
    t.equal(res.status, 200);
    t.same(res.body.billing_address, next);
    t.same((await call('GET', '/v1/billing', { auth: a.auth.read })).body.billing_address, next);
  });

  t.test('the default card appears as {id, type, last4, brand}', async (t) => {
    const pm = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: {
        type: 'card',
        card: { number: '5555555555554444', exp_month: 1, exp_year: new Date().getUTCFullYear() + 2, cvc: '321' },
      },
    });
    t.equal(pm.status, 201);
    const res = await call('GET', '/v1/billing', { auth: a.auth.read });
    t.same(res.body.payment_method, { id: pm.body.id, type: 'card', last4: '4444', brand: 'mastercard' });
    const patched = await call('PATCH', '/v1/billing', { auth: a.auth.write, body: { billing_address: address } });
    t.same(patched.body, {
      customer_id: a.customerId,
      payment_method: { id: pm.body.id, type: 'card', last4: '4444', brand: 'mastercard' },
      billing_address: address,
    });
  });

  t.test('every invalid address is a 422 naming the field; nothing changes', async (t) => {
    const before = (await call('GET', '/v1/billing', { auth: a.auth.read })).body;
    const { zip: _zip, ...noZip } = address;
    const cases: [string, unknown, string[]][] = [
      ['missing zip', { billing_address: noZip }, ['billing_address.zip']],
      ['empty line1', { billing_address: { ...address, line1: '' } }, ['billing_address.line1']],
      ['blank state', { billing_address: { ...address, state: '   ' } }, ['billing_address.state']],
      ['201-character city', { billing_address: { ...address, city: 'c'.repeat(201) } }, ['billing_address.city']],
      ['numeric zip', { billing_address: { ...address, zip: 95014 } }, ['billing_address.zip']],
      ['null line1', { billing_address: { ...address, line1: null } }, ['billing_address.line1']],
      ['unknown address field', { billing_address: { ...address, country: 'US' } }, ['billing_address.country']],
      ['unknown top-level field', { billing_address: address, email: 'x@example.com' }, ['email']],
      ['address null', { billing_address: null }, ['billing_address']],
      ['address missing', {}, ['billing_address']],
      ['body an array', [address], ['']],
      [
        'two fields wrong',
        { billing_address: { line1: '', city: 'ok', state: 'ok' } },
        ['billing_address.line1', 'billing_address.zip'],
      ],
    ];
    for (const [what, body, fields] of cases) {
      const res = await call('PATCH', '/v1/billing', { auth: a.auth.write, body });
      t.equal(res.status, 422, what);
      t.equal(res.body.code, 'validation_failed', what);
      t.same(res.body.errors.map((e: any) => e.field).sort(), fields, what);
    }
    const none = await fetch(`${api.url}/v1/billing`, { method: 'PATCH', headers: a.auth.write });
    t.equal(none.status, 422, 'no body');
    t.same((await call('GET', '/v1/billing', { auth: a.auth.read })).body, before);
  });

  t.test('scopes: read may GET but not PATCH; no token → 401', async (t) => {
    const res = await call('PATCH', '/v1/billing', { auth: a.auth.read, body: { billing_address: address } });
    t.equal(res.status, 403);
    t.equal(res.body.code, 'insufficient_scope');
    t.match(res.headers.get('www-authenticate'), /scope="write"/);
    t.equal((await call('GET', '/v1/billing')).status, 401);
    t.equal((await call('PATCH', '/v1/billing', { body: { billing_address: address } })).status, 401);
    t.equal((await call('GET', '/v1/billing', { auth: { authorization: 'Bearer not-a-token' } })).status, 401);
  });

  t.test('isolation: each account sees only its own billing information', async (t) => {
    const res = await call('GET', '/v1/billing', { auth: b.auth.read });
    t.same(res.body, { customer_id: b.customerId, payment_method: null, billing_address: null });
    const other = { line1: '2 Other St', city: 'Springfield', state: 'IL', zip: '62701' };
    await call('PATCH', '/v1/billing', { auth: b.auth.write, body: { billing_address: other } });
    t.same(
      (await call('GET', '/v1/billing', { auth: a.auth.read })).body.billing_address,
      address,
      "B's PATCH leaves A alone",
    );
    t.same((await call('GET', '/v1/billing', { auth: b.auth.read })).body.billing_address, other);
  });
});
