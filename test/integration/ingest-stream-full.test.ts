import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import {
  createMeter,
  iso,
  postJson,
  startConsumer,
  startUsageApi,
  storedCount,
  storedIds,
  waitForMeter,
} from './ingest-helpers.js';

// The USAGE stream's byte cap with discard: new turns overload into 503s, never into loss.
t.test('a full USAGE stream answers 503 + Retry-After and drops nothing it accepted', async (t) => {
  const config = await isolatedConfig(t, { USAGE_STREAM_MAX_BYTES: String(1024 * 1024) });
  const api = await startUsageApi(t, config);
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meter = await createMeter(infra, acct.accountId);
  await waitForMeter(api, meter, W);
  const jsm = await jetstreamManager(infra.nats);
  t.match((await jsm.streams.info(infra.natsNames.usageStream)).config, {
    retention: 'workqueue',
    discard: 'new',
    max_bytes: 1024 * 1024,
  });

  // No consumer yet: the backlog grows until the cap.
  const ts = iso(Date.now() - 60_000);
  const accepted = new Set<string>();
  let full: { status: number; body: any; headers: Headers } | undefined;
  for (let i = 0; i < 200 && !full; i++) {
    const body = Array.from({ length: 200 }, (_, j) => ({ id: `f-${i}-${j}`, value: 1, timestamp: ts }));
    const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, W, body);
    if (res.status === 202) for (const r of body) accepted.add(r.id);
    else full = res;
  }
  t.ok(full, `the stream filled up after ${accepted.size} records`);
  t.equal(full!.status, 503);
  t.equal(full!.body.code, 'unavailable');
  t.match(full!.body.detail, /full/);
  t.ok(Number(full!.headers.get('retry-after')) >= 1, 'Retry-After');

  // A consumer drains the backlog; ingestion resumes.
  await startConsumer(t, config, { maxWaitMs: 50 });
  await waitUntil(
    async () => (await storedCount(infra, meter.id)) === accepted.size,
    'the backlog stored',
    30_000,
    100,
  );
  const again = await postJson(api.url, `/v1/meters/${meter.id}/usage`, W, { id: 'after', value: 1, timestamp: ts });
  t.equal(again.status, 202, 'accepted again once the backlog drained');
  await waitUntil(async () => (await storedCount(infra, meter.id)) === accepted.size + 1, 'the new record stored');
  const stored = await storedIds(infra, meter.id);
  t.equal(
    [...stored].filter((id) => id.startsWith('f-') && !accepted.has(id)).length,
    0,
    'no refused record was stored',
  );
});
