import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { createCustomers, deploymentMeter } from '../fixtures/operator.js';
import type { Infra } from '../../shared/infra.js';
import { HOUR_MS } from '../../services/domain/usage/rollups-store.js';
import { claimOf } from '../../services/domain/usage/claims.js';
import { insertClaims } from '../../services/domain/usage/claims-store.js';
import { queryUsageTotals } from '../../services/domain/usage/query.js';
import { createMeter, iso, postJson, startConsumer, waitForMeter } from './ingest-helpers.js';

/**
 * A record is (account, meter, id) whatever its timestamp (issue 27, services/domain/usage/claims.ts): a retry that
 * recomputed its timestamp counts once; the same id in two customers' usage of a deployment meter is two records;
 * concurrent sends and redeliveries of one id through two consumers count once.
 */
const DAY = 86_400_000;

async function drained(infra: Infra): Promise<boolean> {
  const jsm = await jetstreamManager(infra.nats);
  const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
  return ci.num_pending === 0 && ci.num_ack_pending === 0;
}

t.test('record identity without the timestamp', async (t) => {
  const config = await isolatedConfig(t, { USAGE_IDENTITY: 'id' });
  const api = await startApi(t, config);
  // Two consumers of the one durable (two processes' worth); the first fails its first inserts after the rows
  // are stored, so their messages are redelivered (maybe to the other one, in another batch).
  let failures = 3;
  await startConsumer(t, config, {
    maxWaitMs: 50,
    afterInsert: async () => {
      if (failures-- > 0) throw new Error('crash after the insert, before the ack');
    },
  });
  await startConsumer(t, config, { maxWaitMs: 50 });
  const { infra } = api;
  const db = config.CLICKHOUSE_DATABASE;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const total = async (accountId: string, meterId: string) => {
    const [r] = await queryUsageTotals(infra.clickhouse, db, [
      { accountId, meterId, type: 'counter', startMs: 0, endMs: Date.now() + DAY },
    ]);
    return r!;
  };
  const send = async (meterId: string, recs: { id: string; value: number; ts: number }[]) => {
    const res = await postJson(
      api.url,
      `/v1/meters/${meterId}/usage`,
      W,
      recs.map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts) })),
    );
    if (res.status !== 202 || res.body.rejected !== 0) throw new Error(`refused: ${JSON.stringify(res.body)}`);
  };

  t.test('a retry with a new timestamp counts once, in its first hour', async (t) => {
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, W);
    const now = Date.now();
    await send(meter.id, [{ id: 'a', value: 5, ts: now - 60_000 }]);
    await waitUntil(async () => (await total(acct.accountId, meter.id)).count === 1, 'the first send visible');
    // The retry carries a timestamp recomputed days earlier (a closed, rolled-up hour); a new record rides along.
    await send(meter.id, [
      { id: 'a', value: 7, ts: now - 3 * DAY },
      { id: 'b', value: 1, ts: now - 2 * DAY },
    ]);
    await waitUntil(async () => (await total(acct.accountId, meter.id)).count === 2, 'the new record visible');
    await waitUntil(() => drained(infra), 'every message acked');
    const r = await total(acct.accountId, meter.id);
    t.equal(r.count, 2, 'a and b, once each');
    t.equal(Number(r.sum), 6, 'a counts its first value (5) under its first timestamp');
    const [old] = await queryUsageTotals(infra.clickhouse, db, [
      {
        accountId: acct.accountId,
        meterId: meter.id,
        type: 'counter',
        startMs: now - 3 * DAY - HOUR_MS,
        endMs: now - 3 * DAY + HOUR_MS,
      },
    ]);
    t.equal(old!.count, 0, 'nothing counted at the retry’s timestamp');
  });

  t.test('a claim whose rows were never stored (a crash between them) lets its own timestamp in', async (t) => {
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, W);
    const ts = Date.now() - 5 * DAY;
    await insertClaims(infra.clickhouse, db, [
      claimOf({ account: acct.accountId, meter: meter.id, id: 'c', ts, received: ts }, Date.now()),
    ]);
    await send(meter.id, [{ id: 'c', value: 2, ts: ts + 1 }]); // another timestamp: a duplicate
    await send(meter.id, [{ id: 'c', value: 3, ts }]); // the claimed record, redelivered
    await waitUntil(async () => (await total(acct.accountId, meter.id)).count === 1, 'the redelivered record visible');
    await waitUntil(() => drained(infra), 'every message acked');
    t.equal(Number((await total(acct.accountId, meter.id)).sum), 3, 'the record under its claimed timestamp');
  });

  t.test('concurrent sends of the same ids with other timestamps, two consumers: each id once', async (t) => {
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, W);
    const IDS = 300;
    const now = Date.now();
    let seed = 27;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Each id 6 times, each time at another timestamp (within 2 days: open and closed hours), in shuffled requests.
    const sends = Array.from({ length: IDS * 6 }, (_, i) => ({
      id: `id-${i % IDS}`,
      value: (i % IDS) + 1,
      ts: now - Math.floor(rand() * 2 * DAY),
    })).sort(() => rand() - 0.5);
    const requests = Array.from({ length: 60 }, (_, i) => sends.slice(i * 30, i * 30 + 30));
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < requests.length; i += 8) await send(meter.id, requests[i]!);
      }),
    );
    await waitUntil(() => drained(infra), 'every message acked', 60_000);
    const r = await total(acct.accountId, meter.id);
    t.equal(r.count, IDS, 'each id once');
    t.equal(Number(r.sum), (IDS * (IDS + 1)) / 2, 'each id’s value once');
    const rs = await infra.clickhouse.query({
      query: `SELECT count() AS n, uniqExact(record_id) AS ids FROM ${db}.usage_records FINAL WHERE meter_id = '${meter.id}'`,
      format: 'JSONEachRow',
    });
    const [raw] = await rs.json<{ n: string; ids: string }>();
    t.same([Number(raw!.n), Number(raw!.ids)], [IDS, IDS], 'one stored row per id');
  });

  t.test('the same id from two customers of a deployment meter counts twice', async (t) => {
    const operator = await createTestAccount(infra, { operator: true });
    const ADMIN = operator.tokens.admin;
    const meter = await deploymentMeter(api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
    const [c1, c2] = await createCustomers(api.url, ADMIN, 2, 'idc');
    const now = Date.now();
    const post = (recs: unknown[]) =>
      postJson(api.url, `/v1/meters/${meter.id}/usage`, `Bearer ${ADMIN}`, recs).then((res) => {
        if (res.status !== 202 || res.body.rejected !== 0) throw new Error(`refused: ${JSON.stringify(res.body)}`);
      });
    await waitUntil(async () => {
      const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, `Bearer ${ADMIN}`, [
        { id: 'x', value: 4, timestamp: iso(now - 60_000), customer: c1!.externalId },
      ]);
      return res.status === 202 && res.body.rejected === 0;
    }, 'the ingress to know the meter and customers');
    // Stored before its retry is sent: with two consumers, whichever message is claimed first is the record.
    await waitUntil(async () => (await total(c1!.accountId, meter.id)).count === 1, 'c1’s record visible');
    await post([
      { id: 'x', value: 6, timestamp: iso(now - 30_000), customer: c2!.externalId },
      { id: 'x', value: 9, timestamp: iso(now - 2 * DAY), customer: c1!.externalId }, // c1's retry, new timestamp
    ]);
    await waitUntil(async () => (await total(c2!.accountId, meter.id)).count === 1, 'c2’s record visible');
    await waitUntil(() => drained(infra), 'every message acked');
    t.same(
      [Number((await total(c1!.accountId, meter.id)).sum), Number((await total(c2!.accountId, meter.id)).sum)],
      [4, 6],
      'each customer’s x once',
    );
  });
});
