import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { PrivateNats } from '../fixtures/private-nats.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { StreamClient } from '../fixtures/usage-stream.js';
import {
  createMeter,
  iso,
  startConsumer,
  startUsageApi,
  storedCount,
  storedIds,
  waitForMeter,
} from '../integration/ingest-helpers.js';

// A private nats-server (never the shared one) is stopped while a usage WebSocket streams frames, then started
// again: frames get `unavailable` while it is down and acks again after, the socket stays open, and ClickHouse
// ends up holding exactly the records of acknowledged frames.
t.test('NATS stopped mid-stream (WebSocket)', async (t) => {
  const nats = await PrivateNats.start(t, 'stream-outage');
  const config = await isolatedConfig(t, { NATS_URL: nats.url });
  const api = await startUsageApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meter = await createMeter(infra, acct.accountId);
  await waitForMeter(api, meter, W);

  const c = await StreamClient.open(api.url, W);
  t.teardown(() => c.close());
  const ts = iso(Date.now() - 60_000);
  const idsOf = (seq: number) => Array.from({ length: 10 }, (_, i) => `s-${seq}-${i}`);
  let seq = 0;
  // Open loop: a frame every 2 ms whatever happened to the earlier ones.
  const sending = setInterval(() => {
    const s = seq++;
    c.send({ seq: s, records: idsOf(s).map((id) => ({ meter_id: meter.id, value: 1, timestamp: ts, id })) });
  }, 2);
  t.teardown(() => clearInterval(sending));
  const acked = () => c.answers.filter((a) => a.accepted === 10).length;
  const unavailable = () => c.answers.filter((a) => a.error?.code === 'unavailable').length;

  await waitUntil(() => acked() >= 300, 'frames acknowledged', 30_000);
  await nats.stop();
  await waitUntil(() => unavailable() >= 20, '`unavailable` answers while NATS is down', 20_000);
  const ackedWhileDown = acked();
  await nats.restart();
  await waitUntil(() => acked() >= ackedWhileDown + 300, 'acks again after NATS is back', 60_000);
  clearInterval(sending);
  await c.waitForAnswers(seq, `answers to all ${seq} frames`, 60_000);
  t.equal(c.closed, undefined, 'the socket stayed open through the outage');

  t.equal(new Set(c.answers.map((a) => a.seq)).size, seq, 'every frame answered exactly once');
  const odd = c.answers.filter((a) => a.accepted !== 10 && a.error?.code !== 'unavailable');
  t.same(odd, [], 'every answer is a full ack or `unavailable`');
  const ackedIds = new Set(c.answers.filter((a) => a.accepted === 10).flatMap((a) => idsOf(a.seq!)));
  const refusedIds = new Set(c.answers.filter((a) => a.error).flatMap((a) => idsOf(a.seq!)));
  t.ok(refusedIds.size >= 200, `${refusedIds.size} records refused during the outage`);

  await waitUntil(
    async () => (await storedCount(infra, meter.id)) >= ackedIds.size,
    `${ackedIds.size} records stored`,
    60_000,
    200,
  );
  const jsm = await jetstreamManager(infra.nats);
  await waitUntil(
    async () => {
      const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
      return ci.num_pending === 0 && ci.num_ack_pending === 0;
    },
    'the stream to be fully consumed',
    30_000,
  );
  const stored = await storedIds(infra, meter.id);
  t.equal(stored.size, ackedIds.size, 'ClickHouse holds exactly as many records as were acknowledged');
  t.equal([...ackedIds].filter((id) => !stored.has(id)).length, 0, 'every acknowledged record is stored');
  t.equal([...stored].filter((id) => refusedIds.has(id)).length, 0, 'no refused record is stored');
});
