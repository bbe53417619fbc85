import t from 'tap';
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { startClickhouse, type ServerHandle } from '../../infra/stack/servers.js';
import { freePort, isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { UsageConsumer } from '../../services/roles/consumer/usage-consumer.js';
import { encodeRow, HDR_COUNT, HDR_DEADLINE, HDR_FORMAT, HDR_VOID, WIRE_FORMAT } from '../../shared/usage/wire.js';
import type { Infra } from '../../shared/infra.js';
import { ACCOUNT_LOCK, withAccountLocks } from '../../services/domain/usage/account-locks.js';
import {
  createMeter,
  iso,
  rawRowCount,
  postJson,
  startConsumer,
  startUsageApi,
  storedCount,
  storedIds,
  waitForMeter,
} from './ingest-helpers.js';

async function drained(infra: Infra): Promise<boolean> {
  const jsm = await jetstreamManager(infra.nats);
  const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
  return ci.num_pending === 0 && ci.num_ack_pending === 0;
}

t.test('poison messages are terminated with a logged reason; the rest is inserted', async (t) => {
  const config = await isolatedConfig(t);
  const base = await testInfra(t, config, 'consumer');
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const infra: Infra = { ...base, log: pino({ level: 'info' }, sink) };
  const consumer = new UsageConsumer(infra, { maxWaitMs: 300 });
  await consumer.start();
  t.teardown(() => consumer.stop());

  const js = jetstream(infra.nats);
  const subject = infra.natsNames.usageSubject('acct_poison');
  const now = Date.now();
  const hdrs = (count: number, deadline = now + 60_000) => {
    const h = natsHeaders();
    h.set(HDR_FORMAT, WIRE_FORMAT);
    h.set(HDR_COUNT, String(count));
    h.set(HDR_DEADLINE, String(deadline));
    return h;
  };
  const rows = (ids: string[]) => ids.map((id) => encodeRow('acct_poison', 'mtr_poison', now, id, '1.5', now)).join('');
  await js.publish(subject, rows(['good-1', 'good-2', 'good-3']), { headers: hdrs(3) });
  await js.publish(subject, 'no headers at all\n');
  await js.publish(subject, encodeRow('acct_poison', 'mtr_poison', now, 'bad-value', 'not-a-number', now), {
    headers: hdrs(1),
  });
  // Rows of another account on this account's subject: a forgery, never inserted (issue 16 item 6).
  await js.publish(subject, rows(['good-6']) + encodeRow('acct_victim', 'mtr_poison', now, 'forged', '1', now), {
    headers: hdrs(2),
  });
  await js.publish(subject, rows(['good-4', 'good-5']), { headers: hdrs(2) });
  const voidH = natsHeaders();
  voidH.set(HDR_VOID, '1');
  await js.publish(subject, new Uint8Array(0), { headers: voidH });
  await js.publish(subject, rows(['late-1']), { headers: hdrs(1, now - 1) }); // stored after its deadline
  await js.publish(subject, rows(['no-newline']).trimEnd(), { headers: hdrs(1) });

  await waitUntil(
    async () => (await drained(infra)) && (await storedCount(infra, 'mtr_poison')) === 5,
    'every message settled',
    20_000,
  ).catch((err) => {
    t.comment(lines.join('\n'));
    throw err;
  });
  t.same(
    [...(await storedIds(infra, 'mtr_poison'))].sort(),
    ['good-1', 'good-2', 'good-3', 'good-4', 'good-5'],
    'valid messages inserted, in spite of the poison in their batch',
  );
  const terminated = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'usage message terminated (poison)');
  t.equal(terminated.length, 4, 'four poison messages terminated');
  t.ok(
    terminated.some((l) => /belongs to another account than its subject's \(acct_poison\)/.test(l.reason)),
    'reason: a row of another account',
  );
  const forged = await infra.clickhouse.query({
    query: `SELECT count() AS c FROM usage_records WHERE account_id = 'acct_victim' OR record_id IN ('forged', 'good-6')`,
    format: 'JSONEachRow',
  });
  t.equal(
    Number((await forged.json<{ c: string }>())[0]!.c),
    0,
    'no row of the forged message is stored, not even its genuine ones',
  );
  t.ok(
    terminated.some((l) => /unknown payload format/.test(l.reason)),
    'reason: no format header',
  );
  t.ok(
    terminated.some((l) => /ClickHouse error 27|Cannot parse/i.test(l.reason)),
    `reason: ClickHouse refused the rows (${terminated.map((l) => l.reason).join(' | ')})`,
  );
  t.ok(
    terminated.some((l) => /newline-terminated/.test(l.reason)),
    'reason: truncated payload',
  );
  t.ok(
    lines.some((l) => l.includes('stored after its deadline')),
    'the late message is skipped and logged',
  );
  const jsm = await jetstreamManager(infra.nats);
  t.equal(
    (await jsm.streams.info(infra.natsNames.usageStream)).state.messages,
    0,
    'the work queue is empty: nothing is redelivered forever',
  );
});

// An insert held up longer than ack_wait (here: another claimer holds the account's claim lock) keeps its messages:
// they are told in progress, not redelivered to run the same insert twice (issue 45: a rolling upgrade's slow
// inserts were redelivered to the other consumers, which then queued on the same lock).
t.test('a slow insert keeps its messages past ack_wait: told in progress, never redelivered', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config, 'consumer');
  const consumer = new UsageConsumer(infra, { maxWaitMs: 50, ackWaitMs: 1_500 });
  await consumer.start();
  t.teardown(() => consumer.stop());
  const js = jetstream(infra.nats);
  const now = Date.now();
  const h = natsHeaders();
  h.set(HDR_FORMAT, WIRE_FORMAT);
  h.set(HDR_COUNT, '2');
  h.set(HDR_DEADLINE, String(now + 60_000));
  let published = false;
  // The lock held for four ack_waits while the message arrives and its insert waits.
  await withAccountLocks(infra.pg, ACCOUNT_LOCK.CLAIM, ['acct_slow'], 'exclusive', async () => {
    await js.publish(
      infra.natsNames.usageSubject('acct_slow'),
      Buffer.concat([
        encodeRow('acct_slow', 'mtr_slow', now, 'slow-1', '1', now),
        encodeRow('acct_slow', 'mtr_slow', now, 'slow-2', '1', now),
      ]),
      { headers: h },
    );
    published = true;
    await new Promise((r) => setTimeout(r, 6_000));
  });
  t.ok(published);
  await waitUntil(
    async () => (await drained(infra)) && (await storedCount(infra, 'mtr_slow')) === 2,
    'the insert',
    30_000,
  );
  const jsm = await jetstreamManager(infra.nats);
  const info = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
  t.equal(info.num_redelivered, 0, 'the message was never redelivered while its insert waited');
  t.equal(await rawRowCount(infra, 'mtr_slow'), 2, 'its rows were inserted once');
});

// ClickHouse (a private server) stops mid-stream: the consumer naks and retries with backoff; after the
// restart every accepted record is stored exactly once.
t.test('ClickHouse stopped mid-stream', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'meterline-ch-outage-'));
  const ports = { httpPort: await freePort(), tcpPort: await freePort(), interserverPort: await freePort() };
  let ch: ServerHandle = await startClickhouse({ dir, ...ports });
  t.teardown(async () => {
    await ch.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  const config = await isolatedConfig(t, { CLICKHOUSE_URL: ch.url });
  const api = await startUsageApi(t, config);
  const { consumer, infra: consumerInfra } = await startConsumer(t, config, {
    maxWaitMs: 100,
    backoffBaseMs: 100,
    backoffMaxMs: 1_000,
  });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meter = await createMeter(infra, acct.accountId);
  await waitForMeter(api, meter, W);

  const accepted = new Set<string>();
  let n = 0;
  let running = true;
  const ts = iso(Date.now() - 60_000);
  const producer = async () => {
    while (running) {
      const body = Array.from({ length: 100 }, () => ({ id: `c-${n++}`, value: 2, timestamp: ts }));
      const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, W, body);
      if (res.status !== 202) throw new Error(`ingest answered ${res.status} though NATS is up`);
      for (const r of body) accepted.add(r.id);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const producing = Promise.all([producer(), producer()]);
  await waitUntil(
    async () => (await storedCount(infra, meter.id)) >= 2_000,
    'records flowing into ClickHouse',
    30_000,
    100,
  );
  await ch.stop();
  const acceptedAtStop = accepted.size;
  await waitUntil(
    async () => /last insert failed/.test((await consumer.health()).detail ?? ''),
    'the consumer to report failing inserts',
    30_000,
  );
  t.match((await consumer.health()).detail, /last insert failed/);
  await waitUntil(
    () => accepted.size >= acceptedAtStop + 3_000,
    'ingestion continues while ClickHouse is down',
    30_000,
  );
  ch = await startClickhouse({ dir, ...ports });
  await new Promise((r) => setTimeout(r, 500));
  running = false;
  await producing;
  await waitUntil(
    async () => (await storedCount(infra, meter.id).catch(() => -1)) === accepted.size,
    `${accepted.size} records stored after the restart`,
    60_000,
    200,
  );
  await waitUntil(() => drained(infra), 'the stream to be fully consumed', 30_000);
  const stored = await storedIds(infra, meter.id);
  t.equal(stored.size, accepted.size, `exactly the ${accepted.size} accepted records are stored`);
  t.equal([...accepted].filter((id) => !stored.has(id)).length, 0, 'none lost');
  t.ok((await consumer.health()).ok, 'the consumer is healthy again');
  const outcomes = await consumerInfra.metrics.registry.getSingleMetricAsString(
    'meterline_usage_consumer_messages_total',
  );
  t.match(outcomes, /outcome="nak"[^\n]* [1-9]/, 'failed inserts were nak’d for redelivery');
});
