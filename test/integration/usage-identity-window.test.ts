import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { spawnConsumer } from '../fixtures/consumer-process.js';
import type { Infra } from '../../shared/infra.js';
import { UsageShards } from '../../shared/clients/usage-shards.js';
import { claimOf } from '../../services/domain/usage/claims.js';
import { insertClaims } from '../../services/domain/usage/claims-store.js';
import { claimNewRows, type ClaimRule } from '../../services/domain/usage/claim-lock.js';
import { RecentIds } from '../../services/domain/usage/recent-ids.js';
import { queryUsageTotals } from '../../services/domain/usage/query.js';
import { createMeter, iso, postJson, startConsumer, waitForMeter } from './ingest-helpers.js';

/**
 * The default identity (issue 45 item 3, docs/usage.md "Counted once"): a record with the id of one accepted within
 * USAGE_IDENTITY_WINDOW (24 h) counts once whatever its timestamp — across a consumer's kill -9 and restart, and
 * across two consumers (each with its memory of recent ids, services/domain/usage/recent-ids.ts) — and beyond the
 * window the timestamp joins the identity.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function drained(infra: Infra): Promise<boolean> {
  const jsm = await jetstreamManager(infra.nats);
  const ci = await jsm.consumers.info(infra.natsNames.usageStream, infra.natsNames.usageConsumer);
  return ci.num_pending === 0 && ci.num_ack_pending === 0;
}

t.test('usage identity within a window, by default', async (t) => {
  const config = await isolatedConfig(t);
  t.equal(config.USAGE_IDENTITY, 'window', 'the window is the default');
  t.equal(config.USAGE_IDENTITY_WINDOW, 86_400, 'of 24 h');
  const api = await startApi(t, config);
  const { infra } = api;
  const db = config.CLICKHOUSE_DATABASE;
  const total = async (accountId: string, meterId: string) => {
    const [r] = await queryUsageTotals(infra.clickhouse, db, [
      { accountId, meterId, type: 'counter', startMs: 0, endMs: Date.now() + DAY },
    ]);
    return { count: r!.count, sum: Number(r!.sum) };
  };
  const sender =
    (authorization: string) => async (meterId: string, recs: { id: string; value: number; ts: number }[]) => {
      const res = await postJson(
        api.url,
        `/v1/meters/${meterId}/usage`,
        authorization,
        recs.map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts) })),
      );
      if (res.status !== 202 || res.body.rejected !== 0) throw new Error(`refused: ${JSON.stringify(res.body)}`);
    };

  t.test('retries with new timestamps across a kill -9 and a restart of the consumer: each id once', async (t) => {
    const acct = await createTestAccount(infra);
    const W = acct.auth.write.authorization;
    const send = sender(W);
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, W);
    const IDS = 200;
    const now = Date.now();
    const round = (shift: number, value: (i: number) => number) =>
      Array.from({ length: IDS }, (_, i) => ({ id: `r-${i}`, value: value(i), ts: now - shift - i * 1000 }));
    const a = spawnConsumer(t, config);
    await a.ready;
    for (let i = 0; i < IDS; i += 50) await send(meter.id, round(60_000, (n) => n + 1).slice(i, i + 50));
    await waitUntil(async () => (await total(acct.accountId, meter.id)).count === IDS, 'the first sends stored');
    // A holds the account's recent ids in memory; it dies with them, and the retries wait in the stream.
    a.child.kill('SIGKILL');
    t.equal(await a.exited, null, 'consumer A killed by SIGKILL');
    await send(
      meter.id,
      round(2 * HOUR, () => 1000),
    );
    const b = spawnConsumer(t, config);
    await b.ready;
    await waitUntil(() => drained(infra), 'B drained the retries', 60_000);
    t.same(
      await total(acct.accountId, meter.id),
      { count: IDS, sum: (IDS * (IDS + 1)) / 2 },
      'after kill -9: each id once, its first value',
    );
    b.child.kill('SIGTERM');
    t.equal(await b.exited, 0, 'B stopped cleanly');
    await send(
      meter.id,
      round(3 * DAY, () => 1000),
    ); // a retry with a timestamp days earlier, stored by the next
    await send(meter.id, [{ id: 'fresh', value: 7, ts: now - 5000 }]);
    const c = spawnConsumer(t, config);
    await c.ready;
    await waitUntil(async () => (await total(acct.accountId, meter.id)).count === IDS + 1, 'the fresh id stored');
    await waitUntil(() => drained(infra), 'C drained the retries', 60_000);
    t.same(
      await total(acct.accountId, meter.id),
      { count: IDS + 1, sum: (IDS * (IDS + 1)) / 2 + 7 },
      'after a restart: each id once, and a new id counts',
    );
    c.child.kill('SIGTERM');
    await c.exited;
  });

  t.test('the window: a retry of an id first accepted 23 h ago counts once, 25 h ago again', async (t) => {
    const acct = await createTestAccount(infra);
    const W = acct.auth.write.authorization;
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, W);
    const now = Date.now();
    // Stored before any consumer reads this account: as if the records had been accepted then.
    const claim = (id: string, ts: number, accepted: number) =>
      claimOf({ account: acct.accountId, meter: meter.id, id, ts, received: accepted });
    await insertClaims(infra.clickhouse, db, [
      claim('in', now - 23 * HOUR, now - 23 * HOUR),
      claim('out', now - 25 * HOUR, now - 25 * HOUR),
    ]);
    await startConsumer(t, config, { maxWaitMs: 50 });
    await sender(W)(meter.id, [
      { id: 'in', value: 3, ts: now - 60_000 },
      { id: 'out', value: 5, ts: now - 60_000 },
    ]);
    await waitUntil(
      async () => (await total(acct.accountId, meter.id)).count === 1,
      'the retry beyond the window stored',
    );
    await waitUntil(() => drained(infra), 'every message acked');
    t.same(
      await total(acct.accountId, meter.id),
      { count: 1, sum: 5 },
      'only the id first accepted 25 h ago counts again',
    );
  });

  t.test('two consumers sending the same ids at other timestamps at once: each id once', async (t) => {
    const acct = await createTestAccount(infra);
    const send = sender(acct.auth.write.authorization);
    const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
    await waitForMeter(api, meter, acct.auth.write.authorization);
    await startConsumer(t, config, { maxWaitMs: 20 });
    await startConsumer(t, config, { maxWaitMs: 20 });
    const IDS = 300;
    const now = Date.now();
    let seed = 45;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const sends = Array.from({ length: IDS * 5 }, (_, i) => ({
      id: `id-${i % IDS}`,
      value: (i % IDS) + 1,
      ts: now - Math.floor(rand() * 2 * DAY),
    })).sort(() => rand() - 0.5);
    const requests = Array.from({ length: 75 }, (_, i) => sends.slice(i * 20, i * 20 + 20));
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let i = w; i < requests.length; i += 6) await send(meter.id, requests[i]!);
      }),
    );
    await waitUntil(() => drained(infra), 'every message acked', 60_000);
    t.same(await total(acct.accountId, meter.id), { count: IDS, sum: (IDS * (IDS + 1)) / 2 }, 'each id once');
  });
});

t.test('two processes claiming one account in turns: each reloads what the other claimed', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const shards = await UsageShards.open(config, { quiet: true });
  t.teardown(() => shards.close());
  const shard = shards.shards[0]!;
  const db = config.CLICKHOUSE_DATABASE;
  const rule = (owner: string): ClaimRule => ({ windowMs: DAY, recent: { ids: new RecentIds(DAY), owner } });
  const A = rule('process-a');
  const B = rule('process-b');
  const now = Date.now();
  const row = (id: string, ts: number) => Buffer.from(`acct_turns\tmtr_turns\t${ts}\t${id}\t1\t${now}\t[]\t[]\n`);
  const kept = async (r: ClaimRule, id: string, ts: number) =>
    (await claimNewRows(infra.pg, shard, db, [row(id, ts)], r)).kept === 1;
  t.ok(await kept(A, 'x', now - 1000), 'A claims x');
  t.ok(await kept(B, 'y', now - 1000), 'B claims y (taking the account over from A)');
  t.notOk(
    await kept(A, 'y', now - 2000),
    'A, its memory missing y, takes the account back, reloads, and drops the retry of y',
  );
  t.notOk(await kept(B, 'x', now - 3000), 'B drops the retry of x');
  t.ok(await kept(B, 'x', now - 1000), 'x under its own timestamp is the same record (a redelivery): kept');
  t.ok(await kept(A, 'z', now - 1000), 'a new id is claimed');
  t.notOk(await kept(A, 'z', now - 4000), 'and is then known');
});
