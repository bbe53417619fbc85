/**
 * A unique_count meter created before the per-hour distinct sets (migration 340) — records, but no
 * registration — gets its sets from the migration pass (services/domain/usage/unique-backfill.ts): readers switch to
 * them only once every hour is covered, an interrupted backfill (registered, not ready) is finished by the next
 * pass, a second pass has nothing to do, and records arriving afterwards land in the sets. Every read before,
 * during and after equals a local Set's size. Real API, consumer, sweeper, ClickHouse and Postgres.
 */
import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { migrateAll } from '../../services/migrate.js';
import { sweptThrough, HOUR_MS } from '../../services/domain/usage/rollups-store.js';
import { UsageShards } from '../../shared/clients/usage-shards.js';
import {
  registerUniqueMeter,
  uniqueKeysOf,
  UNIQUE_ROLLUP_TABLE,
} from '../../services/domain/usage/unique-rollups-store.js';
import { createMeter, iso, postJson, startConsumer, waitForMeter } from './ingest-helpers.js';

const DAY = 86_400_000;

interface Rec {
  id: string;
  ts: number;
  user: string;
}

t.test('unique_count meters older than the distinct sets are backfilled by the migration pass', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const ch = api.infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  const acct = await createTestAccount(api.infra);
  const W = acct.auth.write.authorization;
  const R = acct.auth.read.authorization;
  await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');
  // Written as the control plane wrote unique_count meters before migration 340: no registration.
  const meter = await createMeter(api.infra, acct.accountId, { aggregation: 'unique_count', uniqueBy: 'user' });
  await waitForMeter(api, meter, W);
  const pair = `(account_id, meter_id) IN (('${acct.accountId}', '${meter.id}'))`;
  const ready = async () => (await uniqueKeysOf(ch, db, pair, '', true)).has(`${acct.accountId}\u0000${meter.id}`);
  const setRows = async () => {
    const rs = await ch.query({
      query: `SELECT count() AS n FROM ${db}.${UNIQUE_ROLLUP_TABLE} WHERE meter_id = '${meter.id}'`,
      format: 'JSONEachRow',
    });
    return Number((await rs.json<{ n: string }>())[0]!.n);
  };

  const now = Date.now();
  let seed = 424_242;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // Closed hours of the last three days (swept), plus a few in the hour still filling (read raw).
  const record = (id: string, ts: number): Rec => ({ id, ts, user: `u${Math.floor(rand() * 90)}` });
  const closed = (i: number) => record(`r${i}`, now - 3 * DAY + Math.floor(rand() * (3 * DAY - 3 * HOUR_MS)));
  let live: Rec[] = [
    ...Array.from({ length: 700 }, (_, i) => closed(i)),
    ...Array.from({ length: 20 }, (_, i) => record(`now${i}`, now - Math.floor(rand() * 10 * 60_000) - 1)),
  ];
  const send = async (batch: Rec[]) => {
    const res = await postJson(
      api.url,
      `/v1/meters/${meter.id}/usage`,
      W,
      batch.map((r) => ({ id: r.id, value: 1, timestamp: iso(r.ts), dimensions: { user: r.user } })),
    );
    if (res.status !== 202 || res.body.rejected !== 0)
      throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  for (let i = 0; i < live.length; i += 250) await send(live.slice(i, i + 250));

  const start = iso(now - 4 * DAY).slice(0, 10);
  const end = iso(now).slice(0, 10);
  const usage = async (window: string) => {
    const res = await fetch(
      `${api.url}/v1/meters/${meter.id}/usage?start_date=${start}&end_date=${end}&window=${window}`,
      { headers: { authorization: R } },
    );
    return (await res.json()) as { value: number; count: number; data: { start: string; value?: number }[] };
  };
  const usersIn = (rs: Rec[], from: number, to: number) =>
    new Set(rs.filter((r) => r.ts >= from && r.ts < to).map((r) => r.user)).size;
  /** Day and none windows through the API equal the local sets. */
  const compare = async (t: Test, what: string) => {
    const none = await usage('none');
    t.equal(none.value, usersIn(live, 0, Infinity), `${what}: distinct users of the range`);
    t.equal(none.count, live.length, `${what}: records`);
    const days = await usage('day');
    const starts = days.data.map((d) => Date.parse(d.start));
    t.same(
      days.data.map((d) => d.value ?? 0),
      starts.map((s) => usersIn(live, s, s + DAY)),
      `${what}: distinct users per day`,
    );
  };
  /** The stored sets themselves, hour by hour, against the local sets (closed hours: the sweep wrote them). */
  const wrongHours = async () => {
    const rs = await ch.query({
      query: `SELECT hour, uniqExactIfMerge(uniques) AS u FROM (
          SELECT hour, uniques FROM ${db}.${UNIQUE_ROLLUP_TABLE} WHERE meter_id = '${meter.id}' ORDER BY version DESC LIMIT 1 BY hour, group_key
        ) GROUP BY hour ORDER BY hour`,
      format: 'JSONEachRow',
    });
    const got = new Map(
      (await rs.json<{ hour: string | number; u: string | number }>()).map((r) => [Number(r.hour), Number(r.u)]),
    );
    const closedHours = [
      ...new Set(live.filter((r) => r.ts < now - 2 * HOUR_MS).map((r) => Math.floor(r.ts / HOUR_MS))),
    ];
    return {
      hours: closedHours.length,
      wrong: closedHours.filter((h) => got.get(h) !== usersIn(live, h * HOUR_MS, (h + 1) * HOUR_MS)),
    };
  };
  const compareSets = async (t: Test, what: string) => {
    const { hours, wrong } = await wrongHours();
    t.same(wrong, [], `${what}: every closed hour's set holds its distinct users (${hours} hours)`);
  };

  await waitUntil(async () => (await usage('none')).count === live.length, 'every record visible', 60_000, 100);
  await t.test('before the backfill: the older path, exact', async (t) => {
    t.equal(await setRows(), 0, 'no distinct sets for an unregistered meter');
    t.notOk(await ready(), 'readers do not use sets');
    await compare(t, 'before');
  });

  const shards = await UsageShards.open(config, { quiet: true });
  t.teardown(() => shards.close());
  await t.test('an interrupted backfill (registered, not ready) is not read from', async (t) => {
    await registerUniqueMeter(
      shards.of(acct.accountId),
      db,
      { accountId: acct.accountId, meterId: meter.id, uniqueBy: 'user' },
      false,
    );
    t.notOk(await ready(), 'registered without ready: readers keep the older path');
    await compare(t, 'registered, not ready');
  });

  await t.test('the migration pass backfills, once', async (t) => {
    const report = await migrateAll(config);
    t.same(report.uniqueBackfill, [meter.id], 'the pass names the meter it backfilled');
    t.ok(await ready(), 'readers use the sets');
    await compareSets(t, 'backfilled');
    await compare(t, 'backfilled');
    t.same((await migrateAll(config)).uniqueBackfill, [], 'a second pass has nothing to do');
  });

  await t.test('records after the backfill land in the sets', async (t) => {
    const late = Array.from({ length: 120 }, (_, i) => {
      const r = closed(1000 + i);
      r.id = `late${i}`;
      if (i % 2) r.user = `late-user-${i}`;
      return r;
    });
    await send(late);
    live = [...live, ...late];
    await waitUntil(async () => (await usage('none')).count === live.length, 'the late records visible', 60_000, 100);
    // The raw rows are read before their hours' recompute wrote the sets: wait for that.
    await waitUntil(
      async () => (await wrongHours()).wrong.length === 0,
      'the recompute of the late hours',
      60_000,
      100,
    );
    await compareSets(t, 'late');
    await compare(t, 'late');
  });
});
