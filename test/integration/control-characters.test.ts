import t from 'tap';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { isolatedConfig } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';

/**
 * Issue 49 item 5: free text that reaches a PDF or an email refuses control characters (CR/LF, BEL, ESC, DEL, C1)
 * with a precise 422 naming the field, on every route that takes it (shared/api/text.ts PrintableText); printable
 * Unicode stays welcome. Before: PATCH /v1/billing stored CR/LF, BEL and ESC in the address.
 */
const MESSAGE = 'must be a string of printable characters (no control characters such as CR, LF, tab, BEL or ESC)';
const BAD = ['Main St\r\nBcc: x@evil.example', 'ring\u0007', 'red\u001b[31m', 'tab\there', 'del\u007f', 'c1\u0085'];

t.test('control characters: refused in every printed free-text field', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const customer = await createTestAccount(api.infra, { name: 'Plain Co' });
  const ADMIN = operator.tokens.admin;
  const product = (await callJson(api.url, ADMIN, 'POST', '/v1/products', { name: 'Plan', price: 10, currency: 'USD' }))
    .body.id as string;
  const address = { line1: 'Hauptstraße 1', city: 'Zürich', state: 'ZH', zip: '8001' };
  // [what, token, method, path, body with the text, the field named]
  const cases: [string, string, string, string, (s: string) => unknown, string][] = [
    [
      'billing address',
      customer.tokens.write,
      'PATCH',
      '/v1/billing',
      (s) => ({ billing_address: { ...address, line1: s } }),
      'billing_address.line1',
    ],
    [
      'billing city',
      customer.tokens.write,
      'PATCH',
      '/v1/billing',
      (s) => ({ billing_address: { ...address, city: s } }),
      'billing_address.city',
    ],
    ['customer name', ADMIN, 'POST', '/v1/customers', (s) => ({ name: s, external_id: `x-${Math.random()}` }), 'name'],
    ['product name', ADMIN, 'POST', '/v1/products', (s) => ({ name: s, price: 1, currency: 'USD' }), 'name'],
    [
      'plan name',
      ADMIN,
      'POST',
      '/v1/plans',
      (s) => ({ name: s, currency: 'USD', interval: 'month', items: [{ product_id: product }] }),
      'name',
    ],
    ['coupon name', ADMIN, 'POST', '/v1/coupons', (s) => ({ name: s, percent_off: 10, duration: 'once' }), 'name'],
    [
      'meter name',
      customer.tokens.write,
      'POST',
      '/v1/meters',
      (s) => ({ name: s, unit: 'u', aggregation: 'sum' }),
      'name',
    ],
    [
      'meter unit',
      customer.tokens.write,
      'POST',
      '/v1/meters',
      (s) => ({ name: 'm', unit: s, aggregation: 'sum' }),
      'unit',
    ],
    [
      'legal address',
      ADMIN,
      'POST',
      '/v1/customers',
      (s) => ({
        name: 'L',
        external_id: `l-${Math.random()}`,
        address: { line1: s, city: 'Paris', postal_code: '75001', country: 'FR' },
      }),
      'address.line1',
    ],
  ];
  for (const [what, token, method, path, body, field] of cases) {
    for (const bad of BAD) {
      const r = await callJson(api.url, token, method, path, body(bad));
      t.equal(r.status, 422, `${what} ${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
      t.same(r.body.errors, [{ field, message: MESSAGE }], `${what}: the field named`);
    }
    const fine = await callJson(api.url, token, method, path, body('Ünïcødé — 株式会社 🙂'));
    t.ok(fine.status < 300, `${what}: printable Unicode accepted (${fine.status} ${JSON.stringify(fine.body)})`);
  }
  const stored = await callJson(api.url, customer.tokens.read, 'GET', '/v1/billing');
  t.equal(stored.body.billing_address.city, 'Ünïcødé — 株式会社 🙂', 'nothing of the refused ones stored');
});
