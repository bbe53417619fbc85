import t from 'tap';
import { Readable } from 'node:stream';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { HOUR_MS, MINUTE_ROLLUP_TABLE, sweptThrough } from '../../services/domain/usage/rollups-store.js';
import { markHours, markWholeHours } from '../../services/domain/usage/hour-marks-store.js';
import { planHours } from '../../services/domain/usage/read-plan.js';
import { queryUsage, queryUsageTotals, readPlan } from '../../services/domain/usage/query.js';
import { UsageShards } from '../../shared/clients/usage-shards.js';
import { encodeRow, USAGE_COLUMNS, USAGE_TABLE } from '../../shared/usage/wire.js';
import { ACCOUNT_LOCK, settleLockName, withAccountLocks } from '../../services/domain/usage/account-locks.js';
import { HourSettler, settle, settleHours } from '../../services/domain/usage/hour-settler.js';
import {
  createMeter,
  iso,
  pendingHours,
  postJson,
  startConsumer,
  startUsageApi,
  waitForMeter,
} from './ingest-helpers.js';

/**
 * Settled hours (issue 27, services/domain/usage/hour-marks.ts): an insert marks the hours it touches and no longer
 * recomputes them; reads take marked hours raw until the settler has recomputed them, so they are exact at every
 * moment — late records, retries and the current hour alike — and come from the rollups once settled.
 */
const DAY = 86_400_000;

t.test('settled hours: exact before and after the recompute, the current hour from rollups once quiet', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  // The consumer's own settler runs once at start, then not for an hour: this test settles when it chooses.
  await startConsumer(t, config, { maxWaitMs: 50, settleIntervalMs: 3_600_000 });
  const { infra } = api;
  const ch = infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
  await waitForMeter(api, meter, W);
  const shards = await UsageShards.open(config, { quiet: true });
  t.teardown(() => shards.close());
  // Its minutes settled however few records the current hour holds (a real one waits for MINUTE_SETTLE_FLOOR).
  const settler = new HourSettler(infra.pg, shards, db, infra.log, 1_000, 0);

  const now = Date.now();
  const currentHour = Math.floor(now / HOUR_MS);
  const sent = new Map<string, { ts: number; value: number }>();
  const send = async (recs: { id: string; ts: number; value: number }[]) => {
    const res = await postJson(
      api.url,
      `/v1/meters/${meter.id}/usage`,
      W,
      recs.map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts) })),
    );
    t.equal(res.status, 202);
    for (const r of recs) if (!sent.has(`${r.id}@${r.ts}`)) sent.set(`${r.id}@${r.ts}`, r);
  };
  const expected = (from: number, to: number) => {
    let count = 0;
    let sum = 0;
    for (const r of sent.values())
      if (r.ts >= from && r.ts < to) {
        count++;
        sum += r.value;
      }
    return { count, sum };
  };
  const startMs = Math.floor((now - 31 * DAY) / DAY) * DAY;
  const endMs = (currentHour + 1) * HOUR_MS;
  const read = async () => {
    const res = await queryUsage(ch, db, {
      accountId: acct.accountId,
      meterId: meter.id,
      type: 'counter',
      startMs,
      endMs,
      window: 'hour',
    });
    const wrong = res.windows.filter((w) => {
      const e = expected(w.start, w.end);
      return w.count !== e.count || Number(w.sum) !== e.sum;
    });
    return { total: res.total, wrong: wrong.length };
  };
  const visible = async (n: number) =>
    waitUntil(async () => (await read()).total.count === n, `${n} records visible`, 30_000, 100);

  // Live records in the current hour, and late ones over 30 days (one batch spread over 100 closed hours).
  const intoHour = now - currentHour * HOUR_MS;
  const live = Array.from({ length: 300 }, (_, i) => ({
    id: `live-${i}`,
    ts: currentHour * HOUR_MS + Math.floor((intoHour * i) / 300),
    value: i % 7,
  }));
  const late = Array.from({ length: 500 }, (_, i) => ({
    id: `late-${i}`,
    ts: (currentHour - 1 - (i % 100) * 7) * HOUR_MS + i * 1000,
    value: (i % 11) + 1,
  }));
  await send(live);
  await send(late);
  await visible(800);
  const pending = await pendingHours(infra, meter.id);
  t.equal(pending.length, 101, 'every touched hour is pending: the 100 late ones and the current one');
  const before = await read();
  t.equal(before.wrong, 0, 'every hour exact before any recompute (pending hours are read raw)');
  const hours = await planHours(
    ch,
    db,
    `account_id = '${acct.accountId}' AND meter_id = '${meter.id}'`,
    startMs,
    endMs,
  );
  t.equal(hours.pending.size, 101, 'the read plans them raw');

  // The settler waits for quiet; then every closed hour is recomputed once, and the current hour's minutes.
  const liveMinutes = new Set(live.map((r) => Math.floor(r.ts / 60_000))).size;
  t.equal(
    await settler.settleDue(Date.now() + 10_000),
    100 + liveMinutes,
    `quiet: the 100 closed hours and the current hour's ${liveMinutes} minutes settled in one pass`,
  );
  t.same(await pendingHours(infra, meter.id), [], 'nothing pending');
  const after = await read();
  t.equal(after.wrong, 0, 'every hour exact from the rollups');
  t.equal(after.total.count, 800);
  const settled = await planHours(
    ch,
    db,
    `account_id = '${acct.accountId}' AND meter_id = '${meter.id}'`,
    startMs,
    endMs,
  );
  const plan = readPlan(startMs, endMs, await sweptThrough(ch, db), settled);
  t.same(
    plan.rawRanges.filter(([a, b]) => b - a >= HOUR_MS),
    [],
    'no whole hour is read raw any more, the current one included',
  );
  t.ok(settled.perMinute?.has(currentHour), 'the current hour is read per minute');
  const rs = await ch.query({
    query: `SELECT sum(records) AS n FROM ${db}.${MINUTE_ROLLUP_TABLE} FINAL WHERE meter_id = '${meter.id}' AND intDiv(minute, 60) = ${currentHour}`,
    format: 'JSONEachRow',
  });
  t.equal(Number((await rs.json<{ n: string }>())[0]!.n), 300, 'the current hour has its minute rollups');

  // Retries of both waves with more late records into settled hours: pending again, exact throughout, counted once.
  const later = Array.from({ length: 200 }, (_, i) => ({
    id: `later-${i}`,
    ts: (currentHour - 1 - (i % 50) * 13) * HOUR_MS + i * 500,
    value: 3,
  }));
  await send([...live.slice(0, 100), ...late.slice(0, 100), ...later]);
  await visible(1000);
  t.ok((await pendingHours(infra, meter.id)).length > 0, 'the hours they touched are pending again');
  t.equal((await read()).wrong, 0, 'exact while pending');
  await settler.settleDue(Date.now() + 10_000);
  t.same(await pendingHours(infra, meter.id), [], 'settled again');
  const last = await read();
  t.equal(last.wrong, 0, 'exact after');
  t.equal(last.total.count, 1000, 'each record once');
});

t.test('a recompute waits for an insert between its marks and its rows', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  const { infra } = api;
  const ch = infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  const shards = await UsageShards.open(config, { quiet: true });
  t.teardown(() => shards.close());
  const shard = shards.shards[0]!;
  const acct = await createTestAccount(infra);
  const meterId = 'mtr_settle_lock';
  const hour = Math.floor(Date.now() / HOUR_MS) - 30;
  const row = (id: string, value: string) => encodeRow(acct.accountId, meterId, hour * HOUR_MS + 1000, id, value, 0);
  const insertRows = (rows: Uint8Array[]) =>
    ch.insert({
      table: `${db}.${USAGE_TABLE}`,
      values: Readable.from([Buffer.concat(rows)], { objectMode: false }),
      format: 'TabSeparated',
      columns: [...USAGE_COLUMNS],
    });
  const total = async () => {
    const [r] = await queryUsageTotals(ch, db, [
      { accountId: acct.accountId, meterId, type: 'counter', startMs: hour * HOUR_MS, endMs: (hour + 1) * HOUR_MS },
    ]);
    return r!;
  };
  const counts = new Map([[acct.accountId, new Map([[meterId, new Map([[hour * 3600, 1]])]])]]);

  // An insert as the consumer makes it: the mark, then (while a recompute has started) the row.
  let settle: Promise<number> | undefined;
  let settledEarly = false;
  let insertDone = false;
  await withAccountLocks(
    infra.pg,
    ACCOUNT_LOCK.SETTLE,
    [settleLockName(acct.accountId, meterId)],
    'shared',
    async () => {
      await markHours(ch, db, counts, Date.now());
      settle = settleHours(infra.pg, shard, db, [{ accountId: acct.accountId, meterId, hours: [hour] }]).then((n) => {
        settledEarly = !insertDone;
        return n;
      });
      await new Promise((r) => setTimeout(r, 300));
      await insertRows([row('a', '5')]);
      insertDone = true;
    },
  );
  t.equal(await settle, 1, 'the hour is settled');
  t.notOk(settledEarly, 'not before the insert holding the lock finished');
  t.same(await pendingHours(infra, meterId), [], 'nothing pending');
  const r = await total();
  t.equal(r.count, 1, 'the rollup holds the row whose mark it counted');
  t.equal(Number(r.sum), 5);
});

t.test(
  'an hour marked while open is read from the minute rollups of its settled minutes, its busy minutes raw',
  async (t) => {
    const config = await isolatedConfig(t);
    const api = await startUsageApi(t, config);
    const { infra } = api;
    const ch = infra.clickhouse;
    const db = config.CLICKHOUSE_DATABASE;
    const shards = await UsageShards.open(config, { quiet: true });
    t.teardown(() => shards.close());
    const shard = shards.shards[0]!;
    const acct = await createTestAccount(infra);
    const meterId = 'mtr_settle_minutes';
    // An hour seen from a moment inside it (10 minutes in): it is open, so inserts mark its minutes.
    const hour = Math.floor(Date.now() / HOUR_MS) - 40;
    const openNow = hour * HOUR_MS + 10 * 60_000;
    const minute = (k: number) => hour * 60 + k;
    const rows = [
      [0, 'a', '1.5'],
      [0, 'b', '2'],
      [0, 'c', '3'],
      [1, 'd', '4'],
      [1, 'e', '5'],
      [2, 'f', '6'],
    ] as const;
    // Inserts count rows per epoch second (each row here is 5 ms into its minute's first second).
    const counts = new Map<number, number>();
    for (const [k] of rows) counts.set(minute(k) * 60, (counts.get(minute(k) * 60) ?? 0) + 1);
    await withAccountLocks(
      infra.pg,
      ACCOUNT_LOCK.SETTLE,
      [settleLockName(acct.accountId, meterId)],
      'shared',
      async () => {
        await markHours(ch, db, new Map([[acct.accountId, new Map([[meterId, counts]])]]), openNow);
        await ch.insert({
          table: `${db}.${USAGE_TABLE}`,
          values: Readable.from(
            [
              Buffer.concat(
                rows.map(([k, id, v]) => encodeRow(acct.accountId, meterId, minute(k) * 60_000 + 5, id, v, 0)),
              ),
            ],
            { objectMode: false },
          ),
          format: 'TabSeparated',
          columns: [...USAGE_COLUMNS],
        });
      },
    );
    // Minutes 0 and 1 went quiet; minute 2 is still busy.
    t.equal(
      await settle(
        infra.pg,
        shard,
        db,
        [{ accountId: acct.accountId, meterId, hours: [], minutes: [minute(0), minute(1)] }],
        openNow,
      ),
      2,
      'two minute settles',
    );
    const pair = `account_id = '${acct.accountId}' AND meter_id = '${meterId}'`;
    const range = [hour * HOUR_MS, (hour + 1) * HOUR_MS] as const;
    const hours = await planHours(ch, db, pair, ...range);
    t.same([...hours.pending], [hour], 'the hour is pending');
    t.same(
      [...(hours.perMinute?.get(hour) ?? [])].map(([m, seconds]) => [m, [...seconds]]),
      [[minute(2), [minute(2) * 60]]],
      '… readable per minute, minute 2 pending, per second: its one marked second pending',
    );
    const plan = readPlan(...range, undefined, hours);
    t.same(plan.rawRanges, [[minute(2) * 60_000, minute(2) * 60_000 + 1000]], 'only the busy second is read raw');
    t.same(plan.rollupMinutes, [[minute(0), minute(2)]], 'the settled minutes from rollups; unmarked ones not read');
    t.notOk(plan.rollupSeconds, 'no second rollup part: no second of the busy minute is settled');
    const rs = await ch.query({
      query: `SELECT minute, sum(records) AS n FROM ${db}.${MINUTE_ROLLUP_TABLE} FINAL WHERE meter_id = '${meterId}' GROUP BY minute ORDER BY minute`,
      format: 'JSONEachRow',
    });
    t.same(
      (await rs.json<{ minute: string; n: string }>()).map((r) => [Number(r.minute), Number(r.n)]),
      [
        [minute(0), 3],
        [minute(1), 2],
      ],
      'the quiet minutes have their rollups',
    );
    const total = async () => {
      const [r] = await queryUsageTotals(ch, db, [
        { accountId: acct.accountId, meterId, type: 'counter', startMs: range[0], endMs: range[1] },
      ]);
      return [r!.count, Number(r!.sum)];
    };
    t.same(await total(), [6, 21.5], 'exact: minute rollups and the busy second raw');
    // The busy minute's quiet second settles on its own (the minute itself still busy): nothing raw any more.
    t.equal(
      await settle(
        infra.pg,
        shard,
        db,
        [{ accountId: acct.accountId, meterId, hours: [], minutes: [], seconds: [minute(2) * 60] }],
        openNow,
      ),
      1,
      'one second settle',
    );
    const perSecond = readPlan(...range, undefined, await planHours(ch, db, pair, ...range));
    t.same(perSecond.rawRanges, [], 'no raw part');
    t.same(perSecond.rollupSeconds, [[minute(2) * 60, minute(2) * 60 + 1]], 'minute 2 from its settled second');
    t.same(await total(), [6, 21.5], 'exact: minute rollups and a second rollup');
    const byHour = await queryUsage(ch, db, {
      accountId: acct.accountId,
      meterId,
      type: 'histogram',
      startMs: range[0],
      endMs: range[1],
      window: 'hour',
    });
    t.equal(byHour.total.max, '6.000000000', 'the same read for a histogram (extremes from the minute rollups too)');

    // A whole-hour mark (a correction, a record after the hour closed): no longer read per minute.
    await markWholeHours(ch, db, acct.accountId, meterId, [hour], Date.now());
    const after = await planHours(ch, db, pair, ...range);
    t.notOk(after.perMinute?.has(hour), 'marked whole: not per minute');
    t.same(readPlan(...range, undefined, after).rawRanges, [[...range]], 'the whole hour raw');
    t.same(await total(), [6, 21.5], 'still exact');
    await settleHours(infra.pg, shard, db, [{ accountId: acct.accountId, meterId, hours: [hour] }]);
    t.same(
      readPlan(...range, undefined, await planHours(ch, db, pair, ...range)).rollupHours,
      [[hour, hour + 1]],
      'settled: the hourly rollup',
    );
    t.same(await total(), [6, 21.5], 'exact from it');
  },
);
