import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { spawnConsumer } from '../fixtures/consumer-process.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { createMeter, iso, postJson, startUsageApi, storedCount, waitForMeter } from '../integration/ingest-helpers.js';

// kill -9 of consumer processes in the middle of the stream: nothing lost, nothing counted twice.
t.test('consumer processes killed with SIGKILL mid-stream; totals stay exact', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meter = await createMeter(infra, acct.accountId);
  await waitForMeter(api, meter, W);

  // Two consumer processes share the durable consumer.
  const a = spawnConsumer(t, config);
  const b = spawnConsumer(t, config);
  await Promise.all([a.ready, b.ready]);

  const total = 120_000;
  const perRequest = 400;
  const ts = iso(Date.now() - 60_000);
  let sent = 0;
  let acceptedMilli = 0;
  let acceptedCount = 0;
  const produce = async () => {
    while (sent < total) {
      const first = sent;
      sent += perRequest;
      // Every tenth request is a retry of the previous one: same ids, counted once.
      const base = first % (perRequest * 10) === perRequest * 9 ? first - perRequest : first;
      const body = Array.from({ length: perRequest }, (_, i) => ({
        id: `k-${base + i}`,
        value: ((base + i) % 1000) / 100,
        timestamp: ts,
      }));
      const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, W, body);
      if (res.status !== 202) throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body)}`);
      if (base === first) {
        acceptedCount += perRequest;
        for (const r of body) acceptedMilli += Math.round(r.value * 100);
      }
      await new Promise((r) => setTimeout(r, 5)); // spread the stream over a few seconds
    }
  };
  const producing = Promise.all([produce(), produce()]);

  // Both processes working before the first kill: one account's records with ids are claimed under its claim lock,
  // so the two take turns (docs/usage.md), and in one CI run A had inserted nothing when 15 % was stored.
  await waitUntil(
    async () => a.inserted > 0 && b.inserted > 0 && (await storedCount(infra, meter.id)) >= total * 0.15,
    '15% of the stream stored, by both processes',
    60_000,
    50,
  );
  a.child.kill('SIGKILL');
  t.equal(await a.exited, null, 'consumer A killed by SIGKILL');
  await waitUntil(
    async () => (await storedCount(infra, meter.id)) >= total * 0.4,
    '40% stored by the survivor',
    60_000,
    50,
  );
  b.child.kill('SIGKILL');
  await b.exited;
  const atKill = await storedCount(infra, meter.id);
  t.ok(atKill < total * 0.95, `the second kill happened mid-stream (${atKill} of ~${total * 0.9} stored)`);
  t.ok(a.inserted > 0 && b.inserted > 0, `both processes inserted (A ${a.inserted} rows, B ${b.inserted} rows)`);
  await producing;

  const c = spawnConsumer(t, config);
  await c.ready;
  await waitUntil(
    async () => (await storedCount(infra, meter.id)) === acceptedCount,
    `${acceptedCount} distinct records stored`,
    90_000,
    200,
  );
  // Every message acked: nothing pending that could still add rows.
  const jsm = await jetstreamManager(infra.nats);
  await waitUntil(
    async () => {
      const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
      return ci.num_pending === 0 && ci.num_ack_pending === 0;
    },
    'the durable consumer to be drained',
    30_000,
  );
  const rs = await infra.clickhouse.query({
    query: `SELECT count() AS c, toString(sum(value)) AS s FROM usage_records FINAL WHERE meter_id = '${meter.id}'`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ c: string; s: string }>();
  t.equal(Number(row!.c), acceptedCount, 'exact count');
  t.equal(Number(row!.s), acceptedMilli / 100, `exact sum ${acceptedMilli / 100}`);
  const res = await fetch(
    `${api.url}/v1/meters/${meter.id}/usage?window=none&start_date=${ts.slice(0, 10)}&end_date=${ts.slice(0, 10)}`,
    { headers: acct.auth.read },
  );
  const body = (await res.json()) as any;
  t.equal(body.count, acceptedCount, 'the usage API reports the exact count');
  t.equal(body.value, acceptedMilli / 100, 'and the exact sum');
  c.child.kill('SIGTERM');
  t.equal(await c.exited, 0, 'a SIGTERM stops the consumer cleanly');
});
