import t from 'tap';
import type { Test } from 'tap';
import { MeterlineClient, UsageEmitter } from 'meterline/client';
import { freePort, isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { ApiService } from '../../services/roles/api/service.js';
import { createAuthenticator } from '../../services/roles/api/authenticator.js';
import type { Config } from '../../shared/config.js';
import { startConsumer, storedCount } from './ingest-helpers.js';

async function apiOn(t: Test, config: Config): Promise<ApiService> {
  const infra = await testInfra(t, config, 'api');
  const service = new ApiService(infra, undefined, await createAuthenticator(infra));
  await service.start();
  return service;
}

t.test('meterline/client: the emitter against an api restarted mid-stream loses and doubles nothing', async (t) => {
  const port = await freePort();
  const config = await isolatedConfig(t, { PORT: String(port) });
  let api = await apiOn(t, config);
  t.teardown(() => api.stop());
  const { infra } = await startConsumer(t, config, { maxWaitMs: 100 });
  const acct = await createTestAccount(infra);
  const baseUrl = `http://127.0.0.1:${port}`;
  const token = acct.auth.write.authorization.replace(/^Bearer /, '');
  const client = new MeterlineClient({ baseUrl, token });
  const meter = await client.createMeter({ name: 'tokens', unit: 'tokens', aggregation: 'sum', dimensions: ['model'] });
  t.same(meter.dimensions, ['model'], 'typed client: create a meter');

  const emitter = new UsageEmitter({
    baseUrl,
    token,
    batchSize: 200,
    lingerMs: 20,
    concurrency: 2,
    maxBuffered: 1000,
    retryBaseMs: 20,
    retryMaxMs: 200,
  });
  const total = 6000;
  let restarted = false;
  for (let i = 0; i < total; i++) {
    await emitter.emit({ meter_id: meter.id, value: 1 + (i % 7), dimensions: { model: i % 2 ? 'a' : 'b' } });
    if (!restarted && emitter.counters.accepted >= 1500) {
      restarted = true;
      await api.stop(); // requests in flight get answers or connection errors: the emitter resends those batches
      api = await apiOn(t, config);
    }
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await emitter.close();
  t.ok(restarted, 'the api was restarted while records were being sent');
  const c = emitter.counters;
  t.equal(c.emitted, total);
  t.equal(c.accepted, total, 'every record settled as accepted once');
  t.equal(c.pending, 0);
  t.equal(c.rejected + c.failed, 0);
  t.equal(c.inflight, 0, 'nothing in flight after close');
  t.ok(
    c.acks >= total / 200 && c.acks <= c.requests && c.ackLatencyMsMax > 0 && c.ackLatencyMsSum >= c.ackLatencyMsMax,
    'answers and their latency counted',
  );
  t.comment(`requests ${c.requests}, retries ${c.retries}`);
  await waitUntil(async () => (await storedCount(infra, meter.id)) === total, 'every emitted record stored');
  const usage = await new MeterlineClient({
    baseUrl,
    token: acct.auth.read.authorization.replace(/^Bearer /, ''),
  }).getUsage(meter.id, { window: 'none', group_by: ['model'] });
  t.equal(usage.count, total, 'stored exactly once: nothing lost, nothing doubled');
  let want = 0;
  for (let i = 0; i < total; i++) want += 1 + (i % 7);
  t.equal(usage.value, want);
  t.equal(usage.groups?.length, 2);
});
