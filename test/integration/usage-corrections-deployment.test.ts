import t from 'tap';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';

/**
 * Issue 49 item 5: a correction of a deployment meter names the customer whose records it corrects (its records
 * are every customer's, under each customer's account), and a cancel reports which ids it stopped counting. Before:
 * an admin's cancel matched the operator's own account, changed nothing and said "applied".
 */
t.test('corrections of a deployment meter name the customer; a cancel says what it cancelled', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const [a, b] = await createCustomers(api.url, ADMIN, 2, 'corr');
  const A = await customerToken(api.infra, a!.accountId);
  const meter = await deploymentMeter(api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
  const own = (await callJson(api.url, ADMIN, 'POST', '/v1/meters', { name: 'own', unit: 'u', aggregation: 'sum' }))
    .body;
  await waitForIngressMeter(api.url, ADMIN, meter.id);
  const ts = new Date(Date.now() - 60_000).toISOString();
  const sent = await callJson(api.url, ADMIN, 'POST', `/v1/meters/${meter.id}/usage`, [
    { id: 'r1', value: 5, timestamp: ts, customer: a!.externalId },
    { id: 'r2', value: 1, timestamp: ts, customer: a!.externalId },
    { id: 'r1', value: 7, timestamp: ts, customer: b!.externalId },
  ]);
  t.equal(sent.body.accepted, 3);
  const usageOf = async (externalId: string) =>
    (await callJson(api.url, ADMIN, 'GET', `/v1/meters/${meter.id}/usage?window=none&filter[customer]=${externalId}`))
      .body.value as number;
  await waitUntil(async () => (await usageOf(a!.externalId)) === 6 && (await usageOf(b!.externalId)) === 7, 'stored');
  const correct = (token: string, meterId: string, body: unknown) =>
    callJson(api.url, token, 'POST', `/v1/meters/${meterId}/usage/corrections`, body);

  const unnamed = await correct(ADMIN, meter.id, { cancel: ['r1'] });
  t.equal(unnamed.status, 422, 'a deployment meter’s correction must name its customer');
  t.same(
    unnamed.body.errors.map((e: { field: string }) => e.field),
    ['customer'],
  );
  const unknown = await correct(ADMIN, meter.id, { cancel: ['r1'], customer: 'nobody' });
  t.equal(unknown.status, 422);
  t.equal(unknown.body.code, 'unknown_customer');
  const onOwn = await correct(ADMIN, own.id, { cancel: ['r1'], customer: a!.externalId });
  t.equal(onOwn.status, 422, 'an account meter’s correction names no customer');
  t.same(onOwn.body.errors, [{ field: 'customer', message: 'only corrections of a deployment meter name a customer' }]);
  t.equal((await correct(A, meter.id, { cancel: ['r1'] })).status, 404, 'a customer corrects no deployment meter');

  const cancel = await correct(ADMIN, meter.id, { cancel: ['r1', 'typo'], customer: a!.externalId });
  t.equal(cancel.status, 201, JSON.stringify(cancel.body));
  t.match(cancel.body, { customer_id: a!.id, cancel: ['r1', 'typo'], cancelled_records: ['r1'], state: 'applied' });
  t.equal(await usageOf(a!.externalId), 1, 'A’s r1 stopped counting');
  t.equal(await usageOf(b!.externalId), 7, 'B’s record with the same id is untouched');
  const again = await correct(ADMIN, meter.id, { cancel: ['r1'], customer_id: a!.id });
  t.same(again.body.cancelled_records, [], 'cancelled already: nothing more cancelled, and it says so');
  const replace = await correct(ADMIN, meter.id, {
    customer_id: b!.id,
    replace: {
      start: new Date(Date.parse(ts) - 1000).toISOString(),
      end: new Date(Date.parse(ts) + 1000).toISOString(),
      records: [{ id: 'b-fixed', value: 3, timestamp: ts }],
    },
  });
  t.equal(replace.status, 201, JSON.stringify(replace.body));
  t.equal(await usageOf(b!.externalId), 3, 'B’s range replaced');
  t.equal(await usageOf(a!.externalId), 1, 'A’s untouched');
  const list = await callJson(api.url, ADMIN, 'GET', `/v1/meters/${meter.id}/usage/corrections`);
  t.same(
    list.body.data.map((c: { customer_id: string }) => c.customer_id),
    [b!.id, a!.id, a!.id],
    'the operator lists every customer’s corrections of the meter, newest first',
  );
});
