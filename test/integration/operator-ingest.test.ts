import t from 'tap';
import { Kvm } from '@nats-io/kv';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { UsageConsumer } from '../../services/roles/consumer/usage-consumer.js';
import { writeOverrides } from '../../shared/limits/account-limits.js';
import { UsageEmitter, UsageStream } from '../../shared/client/index.js';

/**
 * The operator-mode ingest rules (docs/design.md §6, shared/customers/attribution.ts) on every path: an admin
 * token's records name their customer (unknown or missing → rejected, that record only); a customer's own token
 * records its own usage and can't name another; a record's identity includes its customer; a new customer is
 * usable by every api within 1 s and after an api restart, and its records survive a consumer restart; one noisy customer is throttled alone, and the emitter has
 * its own ceiling.
 */
t.test('operator ingest rules', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  // The consumer is restarted below (attribution needs nothing of it but the rows), so this test holds it.
  const consumerInfra = await testInfra(t, config, 'consumer');
  let consumer = new UsageConsumer(consumerInfra, { maxWaitMs: 100 });
  await consumer.start();
  t.teardown(() => consumer.stop());
  const operator = await createTestAccount(api.infra, { operator: true });
  const cli = await createTestAccount(api.infra, { name: 'CLI-made, no external id' });
  const ADMIN = operator.tokens.admin;
  const [a, b] = await createCustomers(api.url, ADMIN, 2, 'ingest');
  const A = await customerToken(api.infra, a!.accountId);
  const meter = await deploymentMeter(api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
  const own = (await callJson(api.url, ADMIN, 'POST', '/v1/meters', { name: 'own', unit: 'u', aggregation: 'sum' }))
    .body;
  const ts = new Date(Date.now() - 60_000).toISOString();
  const rec = (value: number, extra: object = {}) => ({ value, timestamp: ts, ...extra });
  const post = (token: string, path: string, body: unknown) => callJson(api.url, token, 'POST', path, body);
  const usageOf = async (externalId: string) =>
    (
      await callJson(
        api.url,
        ADMIN,
        'GET',
        `/v1/meters/${meter.id}/usage?window=none&filter[customer]=${encodeURIComponent(externalId)}`,
      )
    ).body as { value: number; count: number };
  const expected = new Map<string, number>(); // external id (or customer id) → the sum that must be stored
  const counted = (who: string, v: number) => expected.set(who, (expected.get(who) ?? 0) + v);

  t.test('deployment meters: admin makes and changes them, every customer sees and reads them', async (t) => {
    const w = await post(operator.tokens.write, '/v1/meters', {
      name: 'x',
      unit: 'u',
      aggregation: 'sum',
      scope: 'deployment',
    });
    t.equal(w.status, 403);
    t.equal(w.body.code, 'insufficient_scope');
    t.equal(meter.scope, 'deployment');
    t.equal(own.scope, 'account');
    const list = await callJson(api.url, A, 'GET', '/v1/meters');
    t.same(
      list.body.data.map((m: { id: string }) => m.id),
      [meter.id],
      'a customer lists the deployment’s meters',
    );
    t.equal((await callJson(api.url, A, 'GET', `/v1/meters/${meter.id}`)).body.scope, 'deployment');
    t.equal((await callJson(api.url, A, 'GET', `/v1/meters/${own.id}`)).status, 404, 'not the operator’s own meter');
    const change = await callJson(api.url, A, 'PATCH', `/v1/meters/${meter.id}`, { name: 'mine now' });
    t.equal(change.status, 403, 'only admin changes a deployment meter');
    t.equal((await callJson(api.url, ADMIN, 'PATCH', `/v1/meters/${meter.id}`, { unit: 'calls' })).status, 200);
    const unique = await post(ADMIN, '/v1/meters', {
      name: 'u',
      unit: 'u',
      aggregation: 'unique_count',
      unique_by: 'user',
      scope: 'deployment',
    });
    t.equal(unique.status, 422);
  });

  t.test('admin batch: each record names its customer; unknown or missing → that record only', async (t) => {
    const r = await post(ADMIN, `/v1/meters/${meter.id}/usage`, [
      rec(1, { customer: a!.externalId, id: 'same-id' }),
      rec(2, { customer: 'nobody' }),
      rec(4),
      rec(8, { customer: a!.externalId, customer_id: a!.id }),
      rec(16, { customer_id: cli.customerId }),
      rec(32, { customer_id: 'cus_unknown000000000000000' }),
      rec(64, { customer: b!.externalId, id: 'same-id' }),
    ]);
    t.equal(r.status, 202, JSON.stringify(r.body));
    t.equal(r.body.accepted, 3);
    const errorOf = (i: number) => r.body.results[i].error;
    t.match(errorOf(1), { code: 'unknown_customer', errors: [{ field: 'customer' }] });
    t.match(errorOf(2), { code: 'validation_failed', errors: [{ field: 'customer' }] });
    t.match(errorOf(3), { code: 'validation_failed', errors: [{ field: 'customer' }] });
    t.match(errorOf(5), { code: 'unknown_customer', errors: [{ field: 'customer_id' }] });
    counted(a!.externalId, 1);
    counted(cli.customerId, 16);
    counted(b!.externalId, 64); // the same id as A's record: another customer's, another record
    const single = await post(ADMIN, `/v1/meters/${meter.id}/usage`, rec(1, { customer: 'nobody' }));
    t.equal(single.status, 422);
    t.equal(single.body.code, 'unknown_customer');
    t.same(single.body.errors, [{ field: 'customer', message: 'names no customer of this deployment' }]);
    const missing = await post(ADMIN, '/v1/usage', [{ ...rec(1), meter_id: meter.id }]);
    t.equal(missing.status, 422);
    t.same(
      missing.body.errors.map((e: { field: string }) => e.field),
      ['[0].customer'],
    );
    const onOwnMeter = await post(ADMIN, `/v1/meters/${own.id}/usage`, rec(1, { customer: a!.externalId }));
    t.equal(onOwnMeter.status, 422, 'an account meter’s records name no customer');
  });

  t.test('a customer’s own token: its own records, never another customer’s', async (t) => {
    t.equal((await post(A, `/v1/meters/${meter.id}/usage`, rec(100))).status, 202);
    t.equal((await post(A, `/v1/meters/${meter.id}/usage`, rec(200, { customer: a!.externalId }))).status, 202);
    counted(a!.externalId, 300);
    const other = await post(A, `/v1/meters/${meter.id}/usage`, rec(1, { customer: b!.externalId }));
    t.equal(other.status, 422);
    t.equal(other.body.code, 'unknown_customer');
    t.same(other.body.errors, [{ field: 'customer', message: 'must be this token’s own customer' }]);
    const batch = await post(A, '/v1/usage', [
      { ...rec(1000), meter_id: meter.id },
      { ...rec(1), meter_id: meter.id, customer_id: b!.id },
    ]);
    t.equal(batch.body.accepted, 1);
    t.equal(batch.body.results[1].error.code, 'unknown_customer');
    counted(a!.externalId, 1000);
  });

  t.test('CloudEvents: subject names the customer', async (t) => {
    const ce = (id: string, subject?: string) => ({
      specversion: '1.0',
      id,
      source: 'rules',
      type: 'calls',
      time: ts,
      ...(subject !== undefined ? { subject } : {}),
      data: { value: 5 },
    });
    const res = await fetch(`${api.url}/v1/usage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/cloudevents-batch+json' },
      body: JSON.stringify([ce('e1', b!.externalId), ce('e2'), ce('e3', 'nobody')]),
    });
    const body = (await res.json()) as any;
    t.equal(body.accepted, 1, JSON.stringify(body));
    t.match(body.results[1].error, { errors: [{ field: 'subject' }] });
    t.match(body.results[2].error, { code: 'unknown_customer', errors: [{ field: 'subject' }] });
    counted(b!.externalId, 5);
  });

  t.test('the usage stream: the same per-record answers', async (t) => {
    const stream = new UsageStream({ baseUrl: api.url, token: ADMIN });
    const ack = await stream.send([
      { meter_id: meter.id, ...rec(7, { customer: b!.externalId }) },
      { meter_id: meter.id, ...rec(7, { customer: 'nobody' }) },
    ]);
    await stream.close();
    t.equal(ack.accepted, 1);
    t.match(ack.rejections, [{ index: 1, status: 'rejected', error: { code: 'unknown_customer' } }]);
    counted(b!.externalId, 7);
  });

  t.test('the client library: an emitter whose `customer` option names every record’s customer', async (t) => {
    const rejected: unknown[] = [];
    const forB = new UsageEmitter({
      baseUrl: api.url,
      token: ADMIN,
      customer: b!.externalId,
      flushOnExit: false,
      onRejected: (_r, e) => rejected.push(e),
    });
    for (let i = 0; i < 20; i++) await forB.emit({ meter_id: meter.id, value: 0.5, timestamp: ts });
    await forB.emit({ meter_id: meter.id, value: 4, timestamp: ts, customer: a!.externalId }); // its own customer wins
    await forB.close();
    t.same(rejected, []);
    t.match(forB.counters, { emitted: 21, accepted: 21, rejected: 0 });
    counted(b!.externalId, 10);
    counted(a!.externalId, 4);
    const nobody = new UsageEmitter({
      baseUrl: api.url,
      token: ADMIN,
      customer: 'nobody-here',
      flushOnExit: false,
      onRejected: (_r, e) => rejected.push(e),
    });
    await nobody.emit({ meter_id: meter.id, value: 1, timestamp: ts });
    await nobody.emit({ meter_id: meter.id, value: 2, timestamp: ts, customer: b!.externalId });
    await nobody.close();
    t.match(nobody.counters, { accepted: 1, rejected: 1, retries: 0 });
    t.match(rejected, [{ code: 'unknown_customer' }], 'an unknown customer: that record rejected, not retried');
    counted(b!.externalId, 2);
  });

  t.test('a customer is accepted by every api within 1 s, and after an api or a consumer restart', async (t) => {
    const second = await startApi(t, config);
    const [d] = await createCustomers(api.url, ADMIN, 1, 'late');
    await new Promise((r) => setTimeout(r, 1000));
    const r = await post(ADMIN, `/v1/meters/${meter.id}/usage`, rec(9, { customer: d!.externalId }));
    t.equal(r.status, 202, `created on one api 1 s earlier, accepted by another: ${JSON.stringify(r.body)}`);
    const viaSecond = await callJson(
      second.url,
      ADMIN,
      'POST',
      `/v1/meters/${meter.id}/usage`,
      rec(10, { customer: d!.externalId }),
    );
    t.equal(viaSecond.status, 202);
    await second.service.stop();
    const third = await startApi(t, config);
    const afterRestart = await callJson(
      third.url,
      ADMIN,
      'POST',
      `/v1/meters/${meter.id}/usage`,
      rec(11, { customer_id: d!.id }),
    );
    t.equal(afterRestart.status, 202, 'a freshly started api knows every customer before it listens');
    counted(d!.externalId, 30);
    // Records accepted while the consumer is down are stored for their customers by the next one.
    await consumer.stop();
    const whileDown = await callJson(third.url, ADMIN, 'POST', `/v1/meters/${meter.id}/usage`, [
      rec(12, { customer: d!.externalId }),
      rec(13, { customer: b!.externalId }),
    ]);
    t.equal(whileDown.body.accepted, 2, 'accepted (durable in NATS) while no consumer runs');
    counted(d!.externalId, 12);
    counted(b!.externalId, 13);
    consumer = new UsageConsumer(consumerInfra, { maxWaitMs: 100 });
    await consumer.start();
  });

  t.test('limits: one noisy customer is throttled alone; the emitter has its own ceiling', async (t) => {
    const kv = await new Kvm(api.infra.nats).open(api.infra.natsNames.limitsBucket);
    await writeOverrides(kv, a!.accountId, { ingest_records_per_second: 10 });
    const batch = [
      ...Array.from({ length: 50 }, () => rec(1, { customer: a!.externalId })),
      ...Array.from({ length: 50 }, () => rec(1, { customer: b!.externalId })),
    ];
    let r: Awaited<ReturnType<typeof post>> | undefined;
    await waitUntil(async () => {
      r = await post(ADMIN, `/v1/meters/${meter.id}/usage`, batch);
      if (r.body.rejected > 0) return true;
      counted(a!.externalId, 50); // before the new limit reached the api: all accepted
      counted(b!.externalId, 50);
      return false;
    }, 'the api to apply the customer’s new limit');
    const results = r!.body.results as { index: number; status: string; error?: { code: string } }[];
    const aRejected = results.filter((x) => x.index < 50 && x.status === 'rejected');
    t.ok(aRejected.length >= 40, `the noisy customer: ${aRejected.length} of 50 refused`);
    t.ok(
      aRejected.every((x) => x.error!.code === 'rate_limited'),
      'as rate_limited',
    );
    t.equal(results.filter((x) => x.index >= 50 && x.status === 'accepted').length, 50, 'the other customer: all 50');
    counted(a!.externalId, 50 - aRejected.length);
    counted(b!.externalId, 50);
    // 10 records a second refill the bucket between requests (more on a loaded machine): those are accepted.
    await waitUntil(async () => {
      const onlyA = await post(ADMIN, `/v1/meters/${meter.id}/usage`, batch.slice(0, 50));
      if (onlyA.status === 202) counted(a!.externalId, onlyA.body.accepted);
      return onlyA.status === 429;
    }, 'a batch of nothing but the throttled customer: 429');
    await writeOverrides(kv, a!.accountId, { ingest_records_per_second: 10_000_000 });
    await writeOverrides(kv, operator.accountId, { attributed_records_per_second: 20 });
    await waitUntil(async () => {
      const over = await post(
        ADMIN,
        `/v1/meters/${meter.id}/usage`,
        Array.from({ length: 100 }, () => rec(1, { customer: b!.externalId })),
      );
      if (over.status === 202) counted(b!.externalId, over.body.accepted);
      return over.status === 429 && /"attributed"/.test(over.headers.get('ratelimit-policy') ?? '');
    }, 'the emitter ceiling (429, RateLimit-Policy "attributed")');
    await writeOverrides(kv, operator.accountId, { attributed_records_per_second: 10_000_000 });
  });

  t.test('every accepted record counted once, for its customer; nothing of a rejected one', async (t) => {
    for (const [who, sum] of expected) {
      const name = who === cli.customerId ? cli.customerId : who;
      if (who === cli.customerId) continue; // no external id: read below by group
      await waitUntil(async () => (await usageOf(name)).value === sum, `${name} to read ${sum}`);
      t.equal((await usageOf(name)).value, sum, `${name}: ${sum}`);
    }
    const grouped = await callJson(api.url, ADMIN, 'GET', `/v1/meters/${meter.id}/usage?window=none&group_by=customer`);
    const cliGroup = grouped.body.groups.find((g: any) => g.dimensions.customer === cli.customerId);
    t.equal(
      cliGroup?.value,
      expected.get(cli.customerId),
      'a customer without external id is grouped under its cus_ id',
    );
  });
});
