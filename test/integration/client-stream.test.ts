import t from 'tap';
import type { Test } from 'tap';
import {
  MeterlineClient,
  MeterlineError,
  UsageEmitter,
  UsageStream,
  StreamClosedError,
  newClientRecordId,
  type UsageRecord,
} from 'meterline/client';
import { WebSocketServer } from 'ws';
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

/** An api (restartable on its port), a consumer, an account with write and read tokens and one meter. */
async function world(t: Test, env: Record<string, string> = {}) {
  const port = await freePort();
  const config = await isolatedConfig(t, { PORT: String(port), ...env });
  const api = { current: await apiOn(t, config) };
  t.teardown(() => api.current.stop());
  const { infra } = await startConsumer(t, config, { maxWaitMs: 100 });
  const acct = await createTestAccount(infra);
  const baseUrl = `http://127.0.0.1:${port}`;
  const token = acct.auth.write.authorization.replace(/^Bearer /, '');
  const readToken = acct.auth.read.authorization.replace(/^Bearer /, '');
  const meter = await new MeterlineClient({ baseUrl, token }).createMeter({
    name: 'calls',
    unit: 'calls',
    aggregation: 'sum',
  });
  const restart = async () => {
    await api.current.stop();
    api.current = await apiOn(t, config);
  };
  return { infra, baseUrl, token, readToken, meter, restart };
}

const records = (meterId: string, n: number, value = 1): UsageRecord[] =>
  Array.from({ length: n }, () => ({
    meter_id: meterId,
    value,
    timestamp: new Date(Date.now() - 60_000).toISOString(),
    id: newClientRecordId(),
  }));

t.test(
  'UsageStream: a fixed window of unanswered frames, acks with their latency, rejections and exact string frames',
  async (t) => {
    const w = await world(t);
    const stream = new UsageStream({ baseUrl: w.baseUrl, token: w.token, maxInflight: 4 });
    const sends = Array.from({ length: 40 }, () => stream.send(records(w.meter.id, 10)));
    t.equal(stream.counters.inflight, 4, 'only maxInflight frames are sent; the others wait for room');
    const acks = await Promise.all(sends);
    t.same(
      acks.map((a) => a.accepted),
      Array(40).fill(10),
      'every frame answered with its own ack (matched by seq)',
    );
    t.ok(
      acks.every((a) => a.rejected === 0 && a.rejections.length === 0 && a.latencyMs > 0),
      'each ack carries its latency',
    );
    let c = stream.counters;
    t.match(c, { frames: 40, acks: 40, accepted: 400, rejected: 0, refused: 0, inflight: 0, connects: 1 });
    t.ok(
      c.ackLatencyMsSum > 0 && c.ackLatencyMsMax > 0 && c.ackLatencyMsMax * c.acks >= c.ackLatencyMsSum,
      'ack latency counters: Σ and max',
    );

    // A frame with an invalid record: the rest is accepted, the invalid one reported by index.
    const mixed = records(w.meter.id, 3);
    mixed[1] = { ...mixed[1]!, value: 'ten' as unknown as number };
    const ack = await stream.send(mixed);
    t.equal(ack.accepted, 2);
    t.equal(ack.rejected, 1);
    t.equal(ack.rejections[0]?.index, 1);
    t.equal(ack.rejections[0]?.error?.code, 'validation_failed');

    // Records as a JSON string are sent as written: exact decimals.
    const ts = new Date(Date.now() - 60_000).toISOString();
    const exact = await stream.send(
      `[{"meter_id":"${w.meter.id}","value":0.1,"timestamp":"${ts}","id":"exact-1"},{"meter_id":"${w.meter.id}","value":0.2,"timestamp":"${ts}","id":"exact-2"}]`,
    );
    t.equal(exact.accepted, 2);
    await stream.close();
    c = stream.counters;
    t.match(c, { frames: 42, acks: 42, accepted: 404, rejected: 1 });

    await waitUntil(async () => (await storedCount(w.infra, w.meter.id)) === 404, 'the acknowledged records stored');
    const usage = await new MeterlineClient({ baseUrl: w.baseUrl, token: w.readToken }).getUsage(w.meter.id, {
      window: 'none',
    });
    t.equal(usage.count, 404, 'stored exactly the accepted records');
    t.equal(String(usage.value), '402.3', '400 + 2 + 0.1 + 0.2, exactly');
  },
);

t.test('UsageStream: a refused handshake is a MeterlineError; refreshToken is used once after a 401', async (t) => {
  const w = await world(t);
  const bad = new UsageStream({ baseUrl: w.baseUrl, token: 'not-a-token' });
  const err = await bad.send(records(w.meter.id, 1)).catch((e: unknown) => e);
  t.ok(err instanceof MeterlineError && err.status === 401, '401 for a bad token');
  t.equal(bad.counters.inflight, 0, 'the slot is given back');
  const readOnly = await new UsageStream({ baseUrl: w.baseUrl, token: w.readToken })
    .send(records(w.meter.id, 1))
    .catch((e: unknown) => e);
  t.ok(
    readOnly instanceof MeterlineError && readOnly.status === 403 && readOnly.problem?.code === 'insufficient_scope',
    '403 without the write scope',
  );
  let refreshed = 0;
  const refreshing = new UsageStream({
    baseUrl: w.baseUrl,
    token: 'expired',
    refreshToken: async () => (refreshed++, w.token),
  });
  t.equal((await refreshing.send(records(w.meter.id, 1))).accepted, 1, 'connected with the refreshed token');
  t.equal(refreshed, 1);
  await refreshing.close();
});

t.test(
  'UsageStream: a server that stops answering fails its frames after answerTimeoutMs, and the next send reconnects',
  async (t) => {
    // A WebSocket server that takes frames and never answers the first socket's (a hung peer), then answers.
    const port = await freePort();
    const wss = new WebSocketServer({ port, host: '127.0.0.1' });
    t.teardown(() => new Promise<void>((r) => wss.close(() => r())));
    let sockets = 0;
    wss.on('connection', (ws) => {
      const answers = ++sockets > 1;
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { seq: number; records: unknown[] };
        if (answers) ws.send(`{"seq":${frame.seq},"accepted":${frame.records.length},"rejected":0,"results":[]}`);
      });
    });
    const stream = new UsageStream({ baseUrl: `http://127.0.0.1:${port}`, token: 'x', answerTimeoutMs: 300 });
    const lost = await stream.send(records('mtr_x', 2)).catch((e: unknown) => e);
    t.ok(lost instanceof StreamClosedError, 'an unanswered frame fails as unanswered (resend it with the same ids)');
    t.match(stream.counters, { unanswered: 1, inflight: 0 });
    t.equal((await stream.send(records('mtr_x', 2))).accepted, 2, 'the next send opened a new socket');
    t.equal(stream.counters.connects, 2);
    await stream.close();
  },
);

t.test('UsageEmitter over the stream: an api restarted mid-stream loses and doubles nothing', async (t) => {
  const w = await world(t);
  const emitter = new UsageEmitter({
    baseUrl: w.baseUrl,
    token: w.token,
    transport: 'stream',
    batchSize: 200,
    lingerMs: 20,
    concurrency: 3,
    maxBuffered: 1000,
    retryBaseMs: 20,
    retryMaxMs: 200,
  });
  const total = 6000;
  let restarted = false;
  let inflightSeen = 0;
  for (let i = 0; i < total; i++) {
    await emitter.emit({ meter_id: w.meter.id, value: 1 + (i % 5) });
    inflightSeen = Math.max(inflightSeen, emitter.counters.inflight);
    if (!restarted && emitter.counters.accepted >= 1500) {
      restarted = true;
      await w.restart(); // the socket closes (1001) with frames unanswered: the emitter resends them on a new socket
    }
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await emitter.close();
  t.ok(restarted, 'the api was restarted while records were being sent');
  const c = emitter.counters;
  t.match(c, { emitted: total, accepted: total, rejected: 0, failed: 0, pending: 0, inflight: 0 });
  t.ok(inflightSeen > 0 && inflightSeen <= 3, 'frames in flight never beyond concurrency');
  t.ok(c.acks >= total / 200 && c.ackLatencyMsMax > 0, 'answers and their latency are counted');
  t.comment(`frames ${c.requests}, retries ${c.retries}, mean ack ${(c.ackLatencyMsSum / c.acks).toFixed(1)} ms`);
  await waitUntil(async () => (await storedCount(w.infra, w.meter.id)) === total, 'every emitted record stored');
  const usage = await new MeterlineClient({ baseUrl: w.baseUrl, token: w.readToken }).getUsage(w.meter.id, {
    window: 'none',
  });
  t.equal(usage.count, total, 'stored exactly once: nothing lost, nothing doubled');
  let want = 0;
  for (let i = 0; i < total; i++) want += 1 + (i % 5);
  t.equal(usage.value, want);
});

t.test(
  'UsageEmitter over the stream: frames refused rate_limited are resent after retry_after with the same ids',
  async (t) => {
    const w = await world(t, { LIMIT_INGEST_RECORDS_PER_SECOND: '300' });
    const emitter = new UsageEmitter({
      baseUrl: w.baseUrl,
      token: w.token,
      transport: 'stream',
      batchSize: 100,
      lingerMs: 5,
      concurrency: 4,
      retryBaseMs: 20,
    });
    const total = 1200;
    for (let i = 0; i < total; i++) await emitter.emit({ meter_id: w.meter.id, value: 2 });
    await emitter.close();
    const c = emitter.counters;
    t.ok(c.retries > 0, 'some frames were refused over the account rate and resent');
    t.match(c, { accepted: total, failed: 0, rejected: 0 });
    await waitUntil(async () => (await storedCount(w.infra, w.meter.id)) === total, 'every record stored');
    const usage = await new MeterlineClient({ baseUrl: w.baseUrl, token: w.readToken }).getUsage(w.meter.id, {
      window: 'none',
    });
    t.equal(usage.count, total, 'a resent frame counted once');
    t.equal(usage.value, 2 * total);
  },
);
