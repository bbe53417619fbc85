import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { startConsumer } from './ingest-helpers.js';
import { UsageEventEmitter } from '../../services/roles/consumer/usage-events.js';
import { startDispatcher } from './webhook-delivery-helpers.js';

t.test(
  'meter.usage.recorded: once per stored record through consumer redelivery and client retries days apart; only for subscribed accounts',
  async (t) => {
    const config = await isolatedConfig(t);
    const api = await startApi(t, config);
    await startDispatcher(t, config);
    const receiver = await startReceiver(t);
    const a = await createTestAccount(api.infra);
    const b = await createTestAccount(api.infra);
    const call = (token: string, method: string, path: string, body?: unknown) =>
      callJson(api.url, token, method, path, body);

    // The consumer with the emitter; its first batch "crashes" after emitting and before acking, so JetStream
    // redelivers it and the rows are inserted and emitted a second time.
    const consumerInfra = await testInfra(t, config, 'consumer');
    const emitter = new UsageEventEmitter(consumerInfra);
    await emitter.start();
    t.teardown(() => emitter.stop());
    let crashes = 0;
    await startConsumer(t, config, {
      maxWaitMs: 50,
      backoffBaseMs: 50,
      afterInsert: async (msgs) => {
        await emitter.afterInsert(msgs);
        if (crashes === 0) {
          crashes++;
          throw new Error('crash after emitting, before the ack');
        }
      },
    });

    const hook = await call(a.tokens.write, 'POST', '/v1/webhooks', {
      url: receiver.url('/usage'),
      events: ['meter.usage.recorded'],
    });
    t.equal(hook.status, 201);
    await waitUntil(() => emitter.isSubscribed(a.accountId), 'the consumer to learn A subscribed');
    t.notOk(emitter.isSubscribed(b.accountId), 'B has no such webhook');
    const aMeter = (await call(a.tokens.write, 'POST', '/v1/meters', { name: 'a', unit: 'u', aggregation: 'sum' })).body
      .id as string;
    const bMeter = (await call(b.tokens.write, 'POST', '/v1/meters', { name: 'b', unit: 'u', aggregation: 'sum' })).body
      .id as string;
    await waitForIngressMeter(api.url, a.tokens.write, aMeter);
    await waitForIngressMeter(api.url, b.tokens.write, bMeter);

    const ts = new Date(Date.now() - 3_600_000).toISOString();
    const records = Array.from({ length: 50 }, (_, i) => ({ id: `u-${i}`, value: i / 10, timestamp: ts }));
    t.equal((await call(a.tokens.write, 'POST', `/v1/meters/${aMeter}/usage`, records)).status, 202);
    t.equal((await call(b.tokens.write, 'POST', `/v1/meters/${bMeter}/usage`, records.slice(0, 10))).status, 202);

    const idsAt = () => receiver.at('/usage').map((r) => r.headers['x-webhook-id'] as string);
    await waitUntil(() => new Set(idsAt()).size === 50, '50 distinct events at the receiver', 30_000);
    t.equal(crashes, 1, 'the first batch was redelivered after its emission');
    const events = async (accountId: string) =>
      (
        await api.infra.pg.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM outbox_events WHERE account_id = $1 AND type = 'meter.usage.recorded'",
          [accountId],
        )
      ).rows[0]!.n;
    t.equal(await events(a.accountId), 50, 'one event per record despite the redelivery');
    t.equal(await events(b.accountId), 0, 'nothing for the account without a subscribed webhook');
    const one = receiver
      .at('/usage')
      .map((r) => JSON.parse(r.body.toString()))
      .find((p) => p.data.usage_id === 'u-7');
    t.same(one.data, { meter_id: aMeter, usage_id: 'u-7', value: 0.7, timestamp: ts, customer_id: a.customerId });

    // Days later the client retries the same records (same ids) with one new record.
    await api.infra.pg.query(
      "UPDATE outbox_events SET created_at = created_at - interval '3 days' WHERE account_id = $1",
      [a.accountId],
    );
    const retry = [...records, { id: 'u-new', value: 1, timestamp: ts }];
    t.equal((await call(a.tokens.write, 'POST', `/v1/meters/${aMeter}/usage`, retry)).status, 202);
    await waitUntil(() => new Set(idsAt()).size === 51, 'the new record’s event', 30_000);
    t.equal(await events(a.accountId), 51, 'the retried records emitted nothing new');
    const perId = new Map<string, number>();
    for (const id of idsAt()) perId.set(id, (perId.get(id) ?? 0) + 1);
    t.same(
      [...perId.values()].filter((n) => n !== 1),
      [],
      'each event delivered once',
    );
  },
);
