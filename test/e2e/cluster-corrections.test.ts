import t from 'tap';
import { shardIndex } from '../../shared/clickhouse-cluster.js';
import { startLocalCluster } from '../fixtures/cluster.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { waitForMeterEverywhere } from './cluster-helpers.js';

/**
 * Usage corrections on the local cluster (ClickHouse 2 shards × 2 replicas, two api processes): the cancellations
 * table exists per shard behind a Distributed table, a correction writes the account's shard, and reads through
 * the Distributed tables (GLOBAL NOT IN) and the shard's recomputed rollups leave the cancelled records out —
 * for accounts on both shards; a unique_count meter's distinct sets (usage_unique_hourly) likewise.
 */
t.test('corrections on the ClickHouse cluster', async (t) => {
  const c = await startLocalCluster(t);
  const hour = 3_600_000;
  const base = Math.floor((Date.now() - 2 * 86_400_000) / hour) * hour; // a closed hour: served from rollups
  const accounts = [];
  const shards = new Set<number>();
  while (shards.size < 2) {
    const a = await createTestAccount(c.infra);
    if (shards.has(shardIndex(a.accountId, 2))) continue;
    shards.add(shardIndex(a.accountId, 2));
    accounts.push(a);
  }
  for (const [n, account] of accounts.entries()) {
    const W = account.tokens.write;
    const meter = await callJson(c.base, W, 'POST', '/v1/meters', {
      name: 'calls',
      unit: 'call',
      type: 'counter',
      aggregation: 'sum',
    });
    const meterId = meter.body.id as string;
    await waitForMeterEverywhere(c.base, W, meterId);
    const records = Array.from({ length: 10 }, (_, i) => ({
      id: `r${i}`,
      value: i + 1,
      timestamp: new Date(i < 5 ? base + i * 60_000 : Date.now() - 60_000).toISOString(),
    }));
    t.equal((await callJson(c.base, W, 'POST', `/v1/meters/${meterId}/usage`, records)).status, 202);
    const total = async () =>
      (
        await callJson(
          c.base,
          account.tokens.read,
          'GET',
          `/v1/meters/${meterId}/usage?start_date=${new Date(base).toISOString().slice(0, 10)}&window=none`,
        )
      ).body;
    await waitUntil(async () => (await total()).count === 10, `account ${n}: every record counted`, 120_000, 250);
    // r0–r4 sit in a closed hour (rollups), r5–r9 in the current one (raw rows).
    const res = await callJson(c.base, W, 'POST', `/v1/meters/${meterId}/usage/corrections`, {
      cancel: ['r1', 'r3', 'r7'],
    });
    t.equal(res.status, 201, JSON.stringify(res.body));
    const after = await total();
    t.equal(
      after.count,
      7,
      `account ${n} (shard ${shardIndex(account.accountId, 2)}): the cancelled records no longer count`,
    );
    t.equal(after.value, 55 - 2 - 4 - 8, `account ${n}: nor their values`);

    // A unique_count meter: registered on the account's shard, its closed hour read from distinct sets.
    const users = await callJson(c.base, W, 'POST', '/v1/meters', {
      name: 'users',
      unit: 'user',
      type: 'counter',
      aggregation: 'unique_count',
      unique_by: 'user',
    });
    t.equal(users.status, 201, JSON.stringify(users.body));
    const usersId = users.body.id as string;
    await waitForMeterEverywhere(c.base, W, usersId);
    const visits = Array.from({ length: 10 }, (_, i) => ({
      id: `v${i}`,
      value: 1,
      timestamp: new Date(i < 6 ? base + i * 60_000 : Date.now() - 60_000).toISOString(),
      dimensions: { user: `u${i % 4}` },
    }));
    t.equal((await callJson(c.base, W, 'POST', `/v1/meters/${usersId}/usage`, visits)).status, 202);
    const day = new Date(base).toISOString().slice(0, 10);
    const closedHour = async () =>
      (
        await callJson(
          c.base,
          account.tokens.read,
          'GET',
          `/v1/meters/${usersId}/usage?start_date=${day}&end_date=${day}&window=hour`,
        )
      ).body.data.find((d: { start: string }) => Date.parse(d.start) === base);
    await waitUntil(
      async () => (await closedHour())?.count === 6,
      `account ${n}: the closed hour's visits rolled up`,
      120_000,
      250,
    );
    t.equal((await closedHour()).value, 4, `account ${n}: u0–u3 in the closed hour`);
    // The hour is settled (services/domain/usage/hour-marks.ts) a moment after it went quiet: then its set is on the shard.
    const sets = async () => {
      const rs = await c.infra.clickhouse.query({
        query: `SELECT count() AS n FROM usage_unique_hourly WHERE meter_id = '${usersId}'`,
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ n: string }>())[0]!.n);
    };
    await waitUntil(
      async () => (await sets()) > 0,
      `account ${n}: the hour's distinct set is on the shard`,
      60_000,
      250,
    );
    t.equal((await closedHour()).value, 4, `account ${n}: the same count from the set`);
    // v1 and v5 are u1's visits in that hour: cancelling both leaves three users.
    t.equal(
      (await callJson(c.base, W, 'POST', `/v1/meters/${usersId}/usage/corrections`, { cancel: ['v1', 'v5'] })).status,
      201,
    );
    t.match(await closedHour(), { count: 4, value: 3 }, `account ${n}: u1 no longer counts`);
    // A group-by read through the Distributed tables (one SELECT: every group's total and the overall one):
    // v0–v5 in the closed hour (v1, v5 cancelled), v6–v9 raw in the current one.
    const byUser = async () =>
      (
        await callJson(
          c.base,
          account.tokens.read,
          'GET',
          `/v1/meters/${usersId}/usage?start_date=${day}&window=none&group_by=user`,
        )
      ).body;
    await waitUntil(
      async () => (await byUser()).count === 8,
      `account ${n}: the current hour's visits stored`,
      120_000,
      250,
    );
    const grouped = await byUser();
    t.same(
      grouped.groups.map((g: { dimensions: { user: string }; count: number; value: number }) => [
        g.dimensions.user,
        g.count,
        g.value,
      ]),
      [
        ['u0', 3, 1],
        ['u1', 1, 1],
        ['u2', 2, 1],
        ['u3', 2, 1],
      ],
      `account ${n}: every user's visits, the cancelled ones left out`,
    );
    t.equal(grouped.value, 4, `account ${n}: four users over both hours`);
  }
});
