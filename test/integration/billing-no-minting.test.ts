import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';

/**
 * Issue 49 item 1, the two reproductions of the security review, end to end through a period close on the real
 * servers: usage below zero never becomes money the customer is owed.
 * - A customer's own gauge at −100,000,000 pricing the operator's metered product: the usage line is 0 and no
 *   credit grant is made (before: a 1,000,000 USD grant).
 * - An operator's deployment gauge: the customer's own token cannot record it (403 `operator_reported_meter` on
 *   every ingest path), so the 100 seats the operator reported are what the invoice bills (before: overridden
 *   to −1,000 and a 4,990 credit).
 */
t.test('usage below zero mints no credit', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const now = new Date();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const ts = new Date(Math.max(now.getTime() - 60_000, monthStart + 1_000)).toISOString();
  const closeAt = new Date(nextMonth + (w.config.BILLING_GRACE_SECONDS + 60) * 1000).toISOString();
  const perUnit = await w.product('Per unit', 0.01, 'USD', 'metered');
  const perSeat = await w.product('Seats', 4.99, 'USD', 'metered');

  // Reproduction 1: the customer's own gauge, its own subscription, its own token.
  const mallory = await createTestAccount(w.api.infra, { name: 'Mallory' });
  const gauge = await w.meter(mallory, 'level', 'units', 'gauge', 'last');
  await waitForIngressMeter(w.api.url, mallory.tokens.write, gauge);
  const ownSub = await w.made(mallory.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: perUnit, meter_id: gauge }],
  });
  const sent = await call(mallory.tokens.write, 'POST', `/v1/meters/${gauge}/usage`, {
    value: -100_000_000,
    timestamp: ts,
  });
  t.equal(sent.status, 202, 'a gauge may read below zero (a level)');

  // Reproduction 2: the operator's deployment gauge, the customer's own token.
  const [victim] = await createCustomers(w.api.url, ADMIN, 1, 'seats');
  const victimToken = await customerToken(w.api.infra, victim!.accountId);
  const seats = await deploymentMeter(w.api.url, ADMIN, { name: 'seats', type: 'gauge', aggregation: 'last' });
  await waitForIngressMeter(w.api.url, ADMIN, seats.id);
  await w.made(ADMIN, 'POST', '/v1/subscriptions', {
    customer_id: victim!.id,
    items: [{ product_id: perSeat, meter_id: seats.id }],
  });
  const reported = await call(ADMIN, 'POST', `/v1/meters/${seats.id}/usage`, {
    value: 100,
    timestamp: ts,
    customer: victim!.externalId,
  });
  t.equal(reported.status, 202, 'the operator reports 100 seats');
  const later = new Date(Date.parse(ts) + 1_000).toISOString();

  await t.test('the customer cannot override the operator’s gauge, on any ingest path', async (t) => {
    const single = await call(victimToken, 'POST', `/v1/meters/${seats.id}/usage`, { value: -1000, timestamp: later });
    t.equal(single.status, 403, JSON.stringify(single.body));
    t.equal(single.body.code, 'operator_reported_meter');
    const batch = await call(victimToken, 'POST', `/v1/meters/${seats.id}/usage`, [{ value: -1000, timestamp: later }]);
    t.equal(batch.status, 403, 'a batch to the meter: refused whole');
    t.equal(batch.body.code, 'operator_reported_meter');
    const across = await call(victimToken, 'POST', '/v1/usage', [
      { meter_id: seats.id, value: -1000, timestamp: later },
    ]);
    t.equal(across.status, 422, 'POST /v1/usage: nothing valid');
    t.same(across.body.errors, [
      { field: '[0].meter_id', message: 'is a deployment gauge or histogram: only the operator records its usage' },
    ]);
    const viaEvent = await fetch(`${w.api.url}/v1/usage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${victimToken}`, 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: 'e1',
        source: 'me',
        type: seats.id,
        time: later,
        data: { value: -1000 },
      }),
    });
    t.equal(viaEvent.status, 403, 'CloudEvents: refused');
    t.equal(((await viaEvent.json()) as { code: string }).code, 'operator_reported_meter');
    // A deployment counter stays open to the customer's own records (they only add to its own usage).
    const calls = await deploymentMeter(w.api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
    await waitForIngressMeter(w.api.url, ADMIN, calls.id);
    const mixed = await call(victimToken, 'POST', '/v1/usage', [
      { meter_id: calls.id, value: 1, timestamp: later },
      { meter_id: seats.id, value: -1000, timestamp: later },
      { meter_id: calls.id, value: -1, timestamp: later },
    ]);
    t.equal(mixed.status, 202);
    t.equal(mixed.body.accepted, 1);
    t.equal(mixed.body.results[1].error.code, 'operator_reported_meter');
    t.match(mixed.body.results[2].error.errors, [{ field: 'value', message: /greater than or equal to 0/ }]);
  });

  await waitUntil(async () => {
    const own = (await call(mallory.tokens.read, 'GET', `/v1/meters/${gauge}/usage?window=none`)).body;
    const theirs = (await call(victimToken, 'GET', `/v1/meters/${seats.id}/usage?window=none`)).body;
    return own.count === 1 && theirs.count === 1;
  }, 'ClickHouse to hold the records');

  await t.test('the close bills 0 for usage below zero and grants nothing', async (t) => {
    const run = await w.run(closeAt);
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const invoices = (await call(mallory.tokens.read, 'GET', '/v1/billing/invoices')).body.data;
    t.equal(invoices.length, 1, JSON.stringify(invoices));
    t.match(invoices[0], {
      subscription_id: ownSub.id,
      amount: 0,
      lines: [{ type: 'usage', quantity: -100_000_000, amount: 0 }],
    });
    t.equal(invoices[0].lines.length, 1, 'no credit line');
    t.match(invoices[0].lines[0].description, /below zero: priced as 0/);
    const credits = (await call(mallory.tokens.read, 'GET', '/v1/billing/credits')).body;
    t.equal(credits.pagination.total, 0, 'no credit grant');
    t.same(credits.balance, []);
  });

  await t.test('the close bills the 100 seats the operator reported', async (t) => {
    const invoices = (await call(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${victim!.id}`)).body.data;
    t.equal(invoices.length, 1);
    t.match(invoices[0], { amount: 499, lines: [{ type: 'usage', quantity: 100, unit_price: 4.99, amount: 499 }] });
    const credits = (await call(victimToken, 'GET', '/v1/billing/credits')).body;
    t.equal(credits.pagination.total, 0, 'no credit grant');
  });
});
