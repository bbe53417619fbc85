import t from 'tap';
import { Kvm } from '@nats-io/kv';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken } from '../fixtures/operator.js';
import { storedCount } from './ingest-helpers.js';
import { UsageConsumer } from '../../services/roles/consumer/usage-consumer.js';
import { MeterRegistry } from '../../shared/meters/registry.js';
import { meterKeyEntry, putMeter } from '../../shared/meters/record.js';

/**
 * A meter's key (issue 48, docs/usage.md "Meters"): unique per owner, fixed once set, and accepted by every ingest
 * route in place of the `mtr_` id — the records are stored under the meter's id, counted like any other.
 */
t.test('meter keys', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const consumerInfra = await testInfra(t, config, 'consumer');
  const consumer = new UsageConsumer(consumerInfra, { maxWaitMs: 100 });
  await consumer.start();
  t.teardown(() => consumer.stop());
  const acct = await createTestAccount(api.infra);
  const other = await createTestAccount(api.infra);
  const W = acct.tokens.write;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const ts = () => new Date(Date.now() - 60_000).toISOString();

  const created = await call(W, 'POST', '/v1/meters', {
    name: 'LLM tokens',
    unit: 'tokens',
    aggregation: 'sum',
    key: 'llm_tokens',
  });
  t.equal(created.status, 201);
  t.equal(created.body.key, 'llm_tokens', 'the key is part of the meter');
  const meter = created.body as { id: string };

  t.test('bad and taken keys are refused with the field named', async (t) => {
    for (const key of ['LLM', 'mtr_abc', '1st', '', 'a'.repeat(65), 'has space']) {
      const r = await call(W, 'POST', '/v1/meters', { name: 'x', unit: 'u', aggregation: 'sum', key });
      t.equal(r.status, 422, `key ${JSON.stringify(key)}`);
      t.equal(r.body.errors[0].field, 'key');
    }
    const taken = await call(W, 'POST', '/v1/meters', {
      name: 'again',
      unit: 'u',
      aggregation: 'sum',
      key: 'llm_tokens',
    });
    t.equal(taken.status, 409);
    t.equal(taken.body.code, 'meter_key_taken');
    t.equal(taken.body.errors[0].field, 'key');
    const list = await call(W, 'GET', '/v1/meters?key=llm_tokens');
    t.same(
      list.body.data.map((m: { id: string }) => m.id),
      [meter.id],
      'no second meter was written; list filters by key',
    );
    const elsewhere = await call(other.tokens.write, 'POST', '/v1/meters', {
      name: 'theirs',
      unit: 'u',
      aggregation: 'sum',
      key: 'llm_tokens',
    });
    t.equal(elsewhere.status, 201, 'another account may use the same key');
  });

  t.test('a key is set once: PATCH sets a missing key, never changes one', async (t) => {
    const plain = (await call(W, 'POST', '/v1/meters', { name: 'plain', unit: 'u', aggregation: 'sum' })).body;
    t.equal(plain.key, null);
    const set = await call(W, 'PATCH', `/v1/meters/${plain.id}`, { key: 'plain_calls' });
    t.equal(set.status, 200);
    t.equal(set.body.key, 'plain_calls');
    const change = await call(W, 'PATCH', `/v1/meters/${plain.id}`, { key: 'renamed' });
    t.equal(change.status, 409);
    t.equal(change.body.code, 'meter_key_fixed');
    const same = await call(W, 'PATCH', `/v1/meters/${plain.id}`, { key: 'plain_calls', name: 'plain v2' });
    t.equal(same.status, 200, 'repeating the key it has is no change');
    const taken = await call(W, 'PATCH', `/v1/meters/${plain.id}`, { name: 'x' });
    t.equal(taken.status, 200);
    const other2 = (await call(W, 'POST', '/v1/meters', { name: 'p2', unit: 'u', aggregation: 'sum' })).body;
    const dup = await call(W, 'PATCH', `/v1/meters/${other2.id}`, { key: 'plain_calls' });
    t.equal(dup.status, 409);
    t.equal(dup.body.code, 'meter_key_taken');
  });

  t.test('every ingest route takes the key and stores under the id', async (t) => {
    const one = await call(W, 'POST', '/v1/meters/llm_tokens/usage', { value: 5, timestamp: ts(), id: 'k-1' });
    t.equal(one.status, 202);
    t.equal(one.body.meter_id, meter.id, 'the answer names the meter by id');
    const batch = await call(W, 'POST', '/v1/usage', [
      { meter_id: 'llm_tokens', value: 7, timestamp: ts(), id: 'k-2' },
      { meter_id: meter.id, value: 11, timestamp: ts(), id: 'k-3' },
      { meter_id: 'no_such_key', value: 1, timestamp: ts(), id: 'k-4' },
    ]);
    t.equal(batch.status, 202);
    t.equal(batch.body.accepted, 2);
    t.equal(batch.body.results[2].error.code, 'not_found', 'an unknown key: that record only');
    const ce = await fetch(`${api.url}/v1/usage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${W}`, 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: 'k-5',
        source: 'test',
        type: 'llm_tokens',
        time: ts(),
        data: { value: 13 },
      }),
    });
    t.equal(ce.status, 202, await ce.text());
    await waitUntil(async () => (await storedCount(api.infra, meter.id)) === 4, 'the four records stored');
    const usage = await call(W, 'GET', `/v1/meters/${meter.id}/usage?window=none`);
    t.equal(usage.body.value, 36, '5 + 7 + 11 + 13, each once');
    const theirs = await call(other.tokens.write, 'POST', '/v1/meters/no_such_key/usage', {
      value: 1,
      timestamp: ts(),
    });
    t.equal(theirs.status, 404, 'an unknown key is a 404');
  });

  t.test('a key names the caller’s own meter: another account’s key is its own or a 404', async (t) => {
    const stranger = await createTestAccount(api.infra);
    const r = await call(stranger.tokens.write, 'POST', '/v1/meters/llm_tokens/usage', { value: 1, timestamp: ts() });
    t.equal(r.status, 404, 'a key of another account is not found');
    const batch = await call(stranger.tokens.write, 'POST', '/v1/usage', [
      { meter_id: 'llm_tokens', value: 1, timestamp: ts() },
    ]);
    t.equal(batch.status, 422, 'nothing valid in the batch');
    t.same(batch.body.errors, [{ field: '[0].meter_id', message: 'does not exist' }]);
  });

  t.test('deployment meter keys: a customer records its own usage by key', async (t) => {
    const operator = await createTestAccount(api.infra, { operator: true });
    const m = await call(operator.tokens.admin, 'POST', '/v1/meters', {
      name: 'calls',
      unit: 'calls',
      aggregation: 'sum',
      scope: 'deployment',
      key: 'api_calls',
    });
    t.equal(m.status, 201);
    const [c] = await createCustomers(api.url, operator.tokens.admin, 1, 'keys');
    const C = await customerToken(api.infra, c!.accountId);
    const r = await call(C, 'POST', '/v1/meters/api_calls/usage', { value: 3, timestamp: ts(), id: 'd-1' });
    t.equal(r.status, 202);
    t.equal(r.body.meter_id, m.body.id);
  });

  t.test('an ingress whose watch has not delivered a new meter finds it by key in the bucket', async (t) => {
    const registry = new MeterRegistry(api.infra.nats, api.infra.natsNames, api.infra.log);
    await registry.start();
    await registry.stop(); // frozen: only ensureRefs() can learn about new meters from here on
    const kv = await new Kvm(api.infra.nats).open(api.infra.natsNames.meterBucket);
    const late = {
      id: 'mtr_lateKey',
      account_id: 'acct_k',
      type: 'counter' as const,
      aggregation: 'sum',
      status: 'active' as const,
      key: 'late_key',
      updated_at_ms: Date.now(),
    };
    await putMeter(kv, late);
    await kv.put(meterKeyEntry('acct_k', 'late_key'), late.id);
    t.equal(registry.resolve('acct_k', 'late_key'), undefined, 'the frozen watch did not deliver it');
    await registry.ensureRefs('acct_k', ['late_key']);
    t.equal(registry.resolve('acct_k', 'late_key')?.id, late.id, 'read through its key entry');
    t.equal(registry.resolve('acct_other', 'late_key'), undefined, 'a key is its owner’s only');
  });
});
