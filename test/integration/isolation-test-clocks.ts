import type { Test } from 'tap';
import type { RunningApi } from '../fixtures/api.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import type { JsonReply } from '../fixtures/matrix.js';

type Call = (token: string, method: string, path: string, body?: unknown) => Promise<JsonReply>;

/**
 * isolation.test.ts, test clocks: a clock is its operator account's — another operator gets 404 for every route of
 * it and never sees it in its list; a customer's own tokens get 403 (the routes are admin).
 */
export async function testClockIsolation(
  t: Test,
  w: {
    api: RunningApi;
    operator: TestAccount;
    b: TestAccount;
    call: Call;
    made: (...a: Parameters<Call>) => Promise<any>;
  },
): Promise<void> {
  const { api, operator, b, call, made } = w;
  const other = await createTestAccount(api.infra, { operator: true });
  const clock = await made(operator.tokens.admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-11-10T00:00:00Z' });
  const customer = await createTestAccount(api.infra);
  await made(operator.tokens.admin, 'POST', `/v1/test_clocks/${clock.id}/customers`, {
    customer_id: customer.customerId,
  });
  const otherClock = await made(other.tokens.admin, 'POST', '/v1/test_clocks', {
    frozen_time: '2026-11-10T00:00:00Z',
  });
  const attempts: [string, string, unknown?][] = [
    ['GET', `/v1/test_clocks/${clock.id}`],
    ['DELETE', `/v1/test_clocks/${clock.id}`],
    ['POST', `/v1/test_clocks/${clock.id}/advance`, { frozen_time: '2026-12-10T00:00:00Z' }],
    ['POST', `/v1/test_clocks/${clock.id}/customers`, { customer_id: b.customerId }],
  ];
  for (const [method, path, body] of attempts) {
    const res = await call(other.tokens.admin, method, path, body);
    t.equal(res.status, 404, `${method} ${path} by another operator`);
    t.equal(res.body.code, 'not_found');
    t.notOk(JSON.stringify(res.body).includes(customer.customerId), 'the answer names nothing of the clock');
    for (const scope of ['read', 'write'] as const)
      t.equal((await call(b.tokens[scope], method, path, body)).status, 403, `${scope} token of a customer: 403`);
  }
  // Another operator cannot move the first one's customer onto its own clock either.
  const steal = await call(other.tokens.admin, 'POST', `/v1/test_clocks/${otherClock.id}/customers`, {
    customer_id: customer.customerId,
  });
  t.equal(steal.status, 409);
  t.equal(steal.body.code, 'customer_on_test_clock');
  t.same(
    (await call(other.tokens.admin, 'GET', '/v1/test_clocks?per_page=100')).body.data.map((c: any) => c.id),
    [otherClock.id],
    'lists never leak',
  );
  t.match((await call(operator.tokens.admin, 'GET', `/v1/test_clocks/${clock.id}`)).body, {
    frozen_time: '2026-11-10T00:00:00.000Z',
    customer_ids: [customer.customerId],
    status: 'ready',
  });
}
