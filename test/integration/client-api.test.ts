import t from 'tap';
import { createServer } from 'node:http';
import { MeterlineClient, MeterlineError, usageQueryString } from 'meterline/client';
import { freePort, isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { iso, startConsumer, storedCount } from './ingest-helpers.js';

/** The typed client's smaller parts: a batch to one meter, the usage query string, a request timeout. */
t.test(
  'meterline/client: recordMeterUsageBatch settles records one by one; getUsage sends group_by and filters',
  async (t) => {
    const config = await isolatedConfig(t);
    const api = await startApi(t, config);
    const { infra } = await startConsumer(t, config, { maxWaitMs: 100 });
    const acct = await createTestAccount(api.infra);
    const client = new MeterlineClient({
      baseUrl: api.url,
      token: acct.auth.write.authorization.replace(/^Bearer /, ''),
      timeoutMs: 30_000,
    });
    const meter = await client.createMeter({
      name: 'tokens',
      unit: 'tokens',
      aggregation: 'sum',
      dimensions: ['model'],
    });
    const at = iso(Date.now() - 60_000);
    const out = await client.recordMeterUsageBatch(meter.id, [
      { value: 3, timestamp: at, dimensions: { model: 'a' } },
      { value: -1, timestamp: at },
      { value: 4, timestamp: at, dimensions: { model: 'b' } },
    ]);
    t.match(out, { accepted: 2, rejected: 1 });
    t.equal(out.results[1]?.status, 'rejected');
    t.equal(out.results[1]?.error?.code, 'validation_failed');
    const none = await client.recordMeterUsageBatch(meter.id, [{ value: -1, timestamp: at }]).catch((e: unknown) => e);
    t.ok(
      none instanceof MeterlineError && none.status === 422 && none.problem?.errors?.[0]?.field === '[0].value',
      'nothing valid: a 422 problem naming the field',
    );
    await waitUntil(async () => (await storedCount(infra, meter.id)) === 2, 'the two accepted records stored');
    const usage = await client.getUsage(meter.id, {
      window: 'none',
      group_by: ['model'],
      filter: { model: ['a', 'b'] },
    });
    t.same(
      usage.groups?.map((g) => [g.dimensions.model, g.value]),
      [
        ['a', 3],
        ['b', 4],
      ],
    );
    t.same(usage.filters, { model: ['a', 'b'] });
  },
);

t.test('usageQueryString: the GET usage query as the API reads it', async (t) => {
  t.equal(usageQueryString({}), '');
  t.equal(
    decodeURIComponent(
      usageQueryString({
        window: 'day',
        start_date: '2026-11-01',
        group_by: ['model', 'region'],
        filter: { model: ['a', 'b'], region: 'eu' },
      }),
    ),
    'start_date=2026-11-01&window=day&group_by=model,region&filter[model]=a&filter[model]=b&filter[region]=eu',
  );
});

t.test('timeoutMs: a request without an answer is aborted', async (t) => {
  const port = await freePort();
  const silent = createServer(() => undefined); // reads requests, never answers
  await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
  t.teardown(() => {
    silent.closeAllConnections();
    return new Promise<void>((r) => silent.close(() => r()));
  });
  const client = new MeterlineClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', timeoutMs: 200 });
  const err = (await client.getMeter('mtr_x').catch((e: unknown) => e)) as Error;
  t.equal(err.name, 'TimeoutError');
});
