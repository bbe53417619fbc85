import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';
import { checkRequest, startDispatcher } from './webhook-delivery-helpers.js';
import { UsageEventEmitter } from '../../services/roles/consumer/usage-events.js';

/**
 * Deployment webhooks (operator mode, docs/design.md §9): an admin webhook with `scope: "deployment"` receives
 * every customer's events — control-plane events (a subscription the operator made for a customer) and usage
 * events (meter.usage.recorded of attributed records) — each naming its customer (`customer_id`, `external_id`),
 * signed like any other delivery and listed in the operator's delivery log; a customer's own webhook still
 * receives only its own events.
 */
t.test('deployment webhooks: every customer’s events, each naming its customer', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startDispatcher(t, config);
  const consumerInfra = await testInfra(t, config, 'consumer');
  const usageEvents = new UsageEventEmitter(consumerInfra);
  await usageEvents.start();
  t.teardown(() => usageEvents.stop());
  await startConsumer(t, config, { maxWaitMs: 50, afterInsert: usageEvents.afterInsert });
  const receiver = await startReceiver(t);
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const [acme, bolt] = await createCustomers(api.url, ADMIN, 2, 'hooked');
  const acmeToken = await customerToken(api.infra, acme!.accountId);

  const secret = 'deployment-hook-secret-0123456789';
  const refused = await call(operator.tokens.write, 'POST', '/v1/webhooks', {
    url: receiver.url('/all'),
    events: ['subscription.updated'],
    scope: 'deployment',
  });
  t.equal(refused.status, 403, 'only admin makes a deployment webhook');
  const hook = await call(ADMIN, 'POST', '/v1/webhooks', {
    url: receiver.url('/all'),
    events: ['subscription.updated', 'meter.usage.recorded'],
    secret,
    scope: 'deployment',
  });
  t.equal(hook.status, 201, JSON.stringify(hook.body));
  t.equal(hook.body.scope, 'deployment');
  const own = await call(acmeToken, 'POST', '/v1/webhooks', {
    url: receiver.url('/acme'),
    events: ['subscription.updated'],
    secret,
  });
  t.equal(own.body.scope, 'account');

  // Control-plane events: subscriptions the operator makes for each customer.
  const flat = (await call(ADMIN, 'POST', '/v1/products', { name: 'Plan', price: 10, currency: 'USD' })).body.id;
  const subs = new Map<string, string>();
  for (const c of [acme!, bolt!]) {
    const s = await call(ADMIN, 'POST', '/v1/subscriptions', { customer_id: c.id, items: [{ product_id: flat }] });
    t.equal(s.status, 201);
    subs.set(c.id, s.body.id);
  }
  await waitUntil(() => receiver.at('/all').length >= 2 && receiver.at('/acme').length >= 1, 'the deliveries');
  const received = receiver.at('/all').map((r) => checkRequest(r, secret));
  t.same(
    received.flatMap((r) => r.problems),
    [],
    'signed like every delivery',
  );
  t.same(
    received
      .map((r) => [
        r.payload.type,
        r.payload.data.subscription_id,
        r.payload.data.customer_id,
        r.payload.data.external_id,
      ])
      .sort(),
    [
      ['subscription.updated', subs.get(acme!.id), acme!.id, acme!.externalId],
      ['subscription.updated', subs.get(bolt!.id), bolt!.id, bolt!.externalId],
    ].sort(),
    'both customers’ events, each naming its customer',
  );
  t.same(
    receiver.at('/acme').map((r) => JSON.parse(r.body.toString()).data.subscription_id),
    [subs.get(acme!.id)],
    'the customer’s own webhook: its own event only',
  );
  const events = await call(acmeToken, 'GET', '/v1/events');
  t.match(events.body.data[0].data, { customer_id: acme!.id, external_id: acme!.externalId }, 'GET /v1/events too');

  // Usage events of attributed records.
  await waitUntil(() => usageEvents.isSubscribed(bolt!.accountId), 'the consumer to learn of the deployment webhook');
  const meter = await deploymentMeter(api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
  const ts = new Date(Date.now() - 60_000).toISOString();
  const r = await call(ADMIN, 'POST', `/v1/meters/${meter.id}/usage`, [
    { value: 2, timestamp: ts, id: 'u1', customer: bolt!.externalId },
    { value: 3, timestamp: ts, id: 'u1', customer_id: acme!.id },
  ]);
  t.equal(r.body.accepted, 2);
  const usageAt = () =>
    receiver
      .at('/all')
      .map((x) => JSON.parse(x.body.toString()))
      .filter((p) => p.type === 'meter.usage.recorded');
  await waitUntil(() => usageAt().length >= 2, 'the usage events', 60_000);
  t.same(
    usageAt()
      .map((p) => [p.data.customer_id, p.data.external_id, p.data.value, p.data.usage_id, p.data.meter_id])
      .sort(),
    [
      [acme!.id, acme!.externalId, 3, 'u1', meter.id],
      [bolt!.id, bolt!.externalId, 2, 'u1', meter.id],
    ].sort(),
    'one event per record, for its customer (the same id from two customers: two records)',
  );
  const log = await call(ADMIN, 'GET', `/v1/webhooks/${hook.body.id}/deliveries?per_page=100`);
  t.equal(log.body.pagination.total, 4, 'every delivery in the operator’s log');
  t.equal((await call(acmeToken, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`)).status, 404);
});
