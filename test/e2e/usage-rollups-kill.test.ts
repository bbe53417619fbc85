import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { spawnConsumer } from '../fixtures/consumer-process.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { checkAllWindows, milliText, type ModelRecord } from '../fixtures/usage-model.js';
import type { MeterType } from '../../shared/meters/record.js';
import { createMeter, iso, postJson, startUsageApi, storedCount, waitForMeter } from '../integration/ingest-helpers.js';

const DAY = 86_400_000;

// JetStream redelivery forced by kill -9 while late records (closed hours: recomputed by the consumer before
// its ack) and current ones stream in: every window of every aggregation still equals the local model.
t.test('rollups exact after consumer processes are killed with SIGKILL mid-stream', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meters: { id: string; type: MeterType; recs: ModelRecord[] }[] = [];
  for (const [type, aggregation] of [
    ['gauge', 'last'],
    ['histogram', 'p99'],
  ] as [MeterType, string][]) {
    const m = await createMeter(infra, acct.accountId, { type, aggregation });
    await waitForMeter(api, m, W);
    meters.push({ id: m.id, type, recs: [] });
  }
  // A first: JetStream hands messages to the waiting pulls in order, so A (killed first) is sure to get some.
  const a = spawnConsumer(t, config);
  await a.ready;
  const b = spawnConsumer(t, config);
  await b.ready;

  const now = Date.now();
  let seed = 99;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const perMeter = 30_000;
  for (const m of meters) {
    for (let i = 0; i < perMeter; i++) {
      // A third within the last two hours, the rest up to 30 days late; a few share a timestamp.
      const ts =
        i % 3 === 0
          ? now - Math.floor(rand() * 2 * 3_600_000) - 1
          : now - 30 * DAY + Math.floor(rand() * 30 * DAY - 3_600_000);
      m.recs.push({
        id: `k-${i}`,
        ts: i % 50 === 1 ? m.recs[i - 1]!.ts : ts,
        milli: Math.floor(rand() * 2_000_000) - 500_000,
      });
    }
  }
  const perRequest = 300;
  let next = 0;
  const requests = Math.ceil(perMeter / perRequest) * meters.length;
  const produce = async () => {
    while (next < requests) {
      const r = next++;
      const m = meters[r % meters.length]!;
      const first = Math.floor(r / meters.length) * perRequest;
      // Every fifth request re-sends the previous one's ids too (a client retry): counted once.
      const from = first % (perRequest * 5) === perRequest * 4 ? first - perRequest : first;
      const body = m.recs
        .slice(from, first + perRequest)
        .map((x) => ({ id: x.id, value: Number(milliText(x.milli)), timestamp: iso(x.ts) }));
      const res = await postJson(api.url, `/v1/meters/${m.id}/usage`, W, body);
      if (res.status !== 202 || res.body.rejected !== 0)
        throw new Error(`unexpected ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      await new Promise((res) => setTimeout(res, 5));
    }
  };
  const producing = Promise.all([produce(), produce()]);
  const total = perMeter * meters.length;
  const stored = async () =>
    (await Promise.all(meters.map((m) => storedCount(infra, m.id)))).reduce((x, y) => x + y, 0);
  // Each kill waits until the process has inserted rows of its own: a process whose pull was not first in
  // line may get nothing of a short run's first messages.
  await waitUntil(
    async () => a.inserted > 0 && (await stored()) >= total * 0.2,
    'A inserting and 20% visible',
    90_000,
    250,
  );
  a.child.kill('SIGKILL');
  await a.exited;
  const atFirstKill = await stored();
  await waitUntil(
    async () => b.inserted > 0 && (await stored()) >= Math.min(total, atFirstKill + total * 0.3),
    '30% more visible through the survivor',
    90_000,
    250,
  );
  b.child.kill('SIGKILL');
  await b.exited;
  t.ok(
    a.inserted > 0 && b.inserted > 0,
    `both processes inserted before their kill (A ${a.inserted}, B ${b.inserted} rows)`,
  );
  await producing;
  const c = spawnConsumer(t, config);
  await c.ready;
  await waitUntil(async () => (await stored()) === total, `${total} records visible`, 120_000, 250);
  const jsm = await jetstreamManager(infra.nats);
  await waitUntil(
    async () => {
      const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
      return ci.num_pending === 0 && ci.num_ack_pending === 0;
    },
    'the durable consumer to be drained',
    60_000,
  );
  const startMs = Math.floor((now - 31 * DAY) / DAY) * DAY;
  for (const m of meters)
    await checkAllWindows(
      t,
      infra.clickhouse,
      config.CLICKHOUSE_DATABASE,
      { accountId: acct.accountId, meterId: m.id, type: m.type },
      m.recs,
      startMs,
      Math.floor(now / DAY) * DAY + DAY,
    );
  c.child.kill('SIGTERM');
  t.equal(await c.exited, 0, 'a SIGTERM stops the consumer cleanly');
});
