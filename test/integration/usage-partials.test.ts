import t from 'tap';
import { isolatedConfig, testInfra, type TestLike } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import type { Config } from '../../shared/config.js';
import { Readable } from 'node:stream';
import { encodeRow, USAGE_COLUMNS, USAGE_TABLE } from '../../shared/usage/wire.js';
import { UsageShards } from '../../shared/clients/usage-shards.js';
import { readMessageRows } from '../../services/domain/usage/message-rows.js';
import { UsageWriter, type WriteOutcome } from '../../services/domain/usage/writer.js';
import { claimNewRows } from '../../services/domain/usage/claim-lock.js';
import { HOUR_MS } from '../../services/domain/usage/rollups-store.js';
import { queryUsageTotals } from '../../services/domain/usage/query.js';
import { PARTIALS_TABLE } from '../../services/domain/usage/partials.js';
import { markHours } from '../../services/domain/usage/hour-marks-store.js';
import type { SecondCounts } from '../../services/domain/usage/hour-marks.js';
import { settle } from '../../services/domain/usage/hour-settler.js';
import { createMeter, meterReadPlan } from './ingest-helpers.js';

/**
 * Partials of a hot meter's pending seconds (issue 45 item 2, services/domain/usage/partials.ts): a read takes the
 * open hour's pending seconds from the consumer's partial sums instead of its raw rows, so those sums must hold
 * each stored record exactly once — through a client's retry under the same timestamp (stored again, counted by
 * its first message only), a retry under a new timestamp (left out), a message redelivered after it was stored,
 * and one redelivered after a crash between its claims and its rows. Written here through the consumer's own
 * writer with the settler off, so every second stays pending; then each second's partials are compared with its
 * raw rows read with FINAL, and the read with them with the read without them.
 */
const SETTLE_OFF = { maxOpenConnections: 2, sweepIntervalMs: 600_000, settleIntervalMs: 600_000 };

async function writerOf(t: TestLike, config: Config, name: string): Promise<UsageWriter<string>> {
  const infra = await testInfra(t, config, name);
  const writer = new UsageWriter<string>(infra, SETTLE_OFF);
  await writer.open();
  t.teardown(() => writer.stop());
  return writer;
}

/** A fresh counter in an open hour clear of its end (every record in one hour), and a writer of its own. */
async function openHourMeter(t: TestLike, name: string, env: Record<string, string> = {}) {
  while (HOUR_MS - (Date.now() % HOUR_MS) < 20_000) await new Promise((r) => setTimeout(r, 1000));
  const config = await isolatedConfig(t, env);
  const infra = await testInfra(t, config, name);
  const acct = await createTestAccount(infra);
  const meter = await createMeter(infra, acct.accountId, { type: 'counter', aggregation: 'sum' });
  const writer = await writerOf(t, config, `${name}-writer`);
  return { config, infra, ch: infra.clickhouse, db: config.CLICKHOUSE_DATABASE, acct, meter, writer };
}

t.test('partials hold each stored record once, and a read with them equals the raw rows', async (t) => {
  const { config, infra, ch, db, acct, meter, writer } = await openHourMeter(t, 'partials-test');
  const now = Date.now();
  const T1 = now - 5_000;
  const T2 = now - 3_000;
  type Rec = [id: string, ts: number, value: string];
  const message = (recs: Rec[]) =>
    Buffer.concat(recs.map(([id, ts, v]) => encodeRow(acct.accountId, meter.id, ts, id, v, now)));
  const write = async (w: UsageWriter<string>, key: number, recs: Rec[]) => {
    const data = message(recs);
    const read = readMessageRows(acct.accountId, data, recs.length);
    if ('poison' in read) throw new Error(read.poison);
    const outcomes: WriteOutcome[] = [];
    await w.write({ msgs: [`m${key}`], rowsOf: [read.rows], chunks: [data], rows: recs.length, keys: [key] }, (_, o) =>
      outcomes.push(o),
    );
    t.same(outcomes, [{ kind: 'inserted' }], `message ${key} stored`);
  };

  const m1: Rec[] = [
    ['a', T1, '1'],
    ['b', T1, '2.5'],
    ['c', T2, '3'],
    ['use_aaaaaaaaaaaaaaaaaaaaaa', T2, '10'],
  ];
  await write(writer, 101, m1);
  // A client's retry of a and b under the same timestamps, with a new record d: only d is 102's.
  await write(writer, 102, [
    ['a', T1, '1'],
    ['b', T1, '2.5'],
    ['d', T2, '4'],
  ]);
  // A retry of c under a new timestamp: left out (the identity window).
  await write(writer, 103, [['c', T1, '100']]);
  // 101 redelivered after it was stored (its ack lost): the same partial again.
  await write(writer, 101, m1);
  // 104 claimed by a consumer that died before its rows; redelivered to another process: still 104's records.
  const shards = await UsageShards.open(config, { maxOpenConnections: 1, quiet: true });
  t.teardown(() => shards.close());
  const m4: Rec[] = [['e', T1, '0.000000001']];
  await claimNewRows(infra.pg, shards.of(acct.accountId), db, [message(m4)], { windowMs: 86_400_000 }, [104]);
  await write(await writerOf(t, config, 'partials-writer-2'), 104, m4);

  const bySecond = async (from: string) => {
    const rs = await ch.query({
      query: `SELECT ${from === 'raw' ? 'intDiv(ts_ms, 1000) AS s, toString(count()) AS n, toString(sum(value)) AS v' : 'second AS s, toString(sum(records)) AS n, toString(sum(sum)) AS v'}
        FROM ${db}.${from === 'raw' ? 'usage_records' : PARTIALS_TABLE} FINAL
        WHERE account_id = '${acct.accountId}' AND meter_id = '${meter.id}' GROUP BY s ORDER BY s`,
      format: 'JSONEachRow',
    });
    return rs.json<{ s: string; n: string; v: string }>();
  };
  const raw = await bySecond('raw');
  t.same(
    raw.map((r) => [r.n, r.v]),
    [
      ['3', '3.500000001'],
      ['3', '17.000000000'],
    ],
    'the raw rows: a, b, e at T1; c, d and the assigned id at T2',
  );
  t.same(await bySecond('partials'), raw, 'each second’s partials hold exactly its raw rows');

  const range = { startMs: Math.floor(now / HOUR_MS) * HOUR_MS, endMs: (Math.floor(now / HOUR_MS) + 1) * HOUR_MS };
  const plan = await meterReadPlan(infra, acct.accountId, meter.id, range);
  t.same(plan.rawRanges, [], 'the pending seconds are read from nowhere raw');
  t.same(
    plan.partialSeconds,
    [
      [Math.floor(T1 / 1000), Math.floor(T1 / 1000) + 1],
      [Math.floor(T2 / 1000), Math.floor(T2 / 1000) + 1],
    ],
    'but from the partials',
  );
  const totals = async (neverCorrected: boolean) => {
    const [r] = await queryUsageTotals(ch, db, [
      { accountId: acct.accountId, meterId: meter.id, type: 'counter', ...range, neverCorrected },
    ]);
    return { count: r!.count, sum: r!.sum };
  };
  t.same(await totals(true), { count: 6, sum: '20.500000001' }, 'the read from partials: each record once');
  t.same(await totals(false), await totals(true), 'equal to the read of the raw rows (a meter that may be corrected)');
});

t.test(
  'an insert in flight counts once its partials are stored; after a recompute its second is read raw',
  async (t) => {
    const { config, infra, ch, db, acct, meter, writer } = await openHourMeter(t, 'partials-in-flight');
    const shards = await UsageShards.open(config, { maxOpenConnections: 1, quiet: true });
    t.teardown(() => shards.close());
    const shard = shards.of(acct.accountId);
    const now = Date.now();
    const T1 = now - 4_000;
    const second = Math.floor(T1 / 1000);
    const message = (recs: [string, string][]) =>
      Buffer.concat(recs.map(([id, v]) => encodeRow(acct.accountId, meter.id, T1, id, v, now)));
    const write = async (key: number, recs: [string, string][]) => {
      const data = message(recs);
      const read = readMessageRows(acct.accountId, data, recs.length);
      if ('poison' in read) throw new Error(read.poison);
      await writer.write(
        { msgs: [`m${key}`], rowsOf: [read.rows], chunks: [data], rows: recs.length, keys: [key] },
        () => undefined,
      );
    };
    // What the writer does before its partials (writer.ts insertCounted): claims, marks, rows — and then stops, as a
    // consumer does between its rows and its partials (in flight, or killed there).
    const upToRows = async (key: number, recs: [string, string][]) => {
      const data = message(recs);
      await claimNewRows(infra.pg, shard, db, [data], { windowMs: 86_400_000 }, [key]);
      const counts: SecondCounts = new Map([[acct.accountId, new Map([[meter.id, new Map([[second, recs.length]])]])]]);
      await markHours(ch, db, counts, Date.now());
      await ch.insert({
        table: USAGE_TABLE,
        values: Readable.from([data], { objectMode: false }),
        format: 'TabSeparated',
        columns: [...USAGE_COLUMNS],
      });
    };
    const range = { startMs: Math.floor(now / HOUR_MS) * HOUR_MS, endMs: (Math.floor(now / HOUR_MS) + 1) * HOUR_MS };
    const planned = () => meterReadPlan(infra, acct.accountId, meter.id, range);
    const total = async () => {
      const [r] = await queryUsageTotals(ch, db, [
        { accountId: acct.accountId, meterId: meter.id, type: 'counter', ...range, neverCorrected: true },
      ]);
      return { count: r!.count, sum: r!.sum };
    };

    await write(301, [['a', '1']]);
    await upToRows(302, [['b', '2']]);
    t.same((await planned()).rawRanges, [], 'the second an insert in flight marked is read from nowhere raw');
    t.same(await total(), { count: 1, sum: '1.000000000' }, 'its records are not counted yet: only 301’s');
    await write(302, [['b', '2']]);
    t.same(await total(), { count: 2, sum: '3.000000000' }, 'redelivered, its partials stored: counted, once');

    // The second recomputed (as the settler does once it is quiet), then another insert stopped before its partials.
    await settle(infra.pg, shard, db, [
      { accountId: acct.accountId, meterId: meter.id, hours: [], minutes: [], seconds: [second] },
    ]);
    t.same(await total(), { count: 2, sum: '3.000000000' }, 'from the second rollup: the same');
    await upToRows(303, [['c', '4']]);
    t.same(
      (await planned()).rawRanges,
      [[second * 1000, (second + 1) * 1000]],
      'after a recompute, a second with an insert in flight is read raw',
    );
    t.same(
      await total(),
      { count: 3, sum: '7.000000000' },
      'so its stored rows count: no read answers less than one before',
    );
    await write(303, [['c', '4']]);
    t.same(await total(), { count: 3, sum: '7.000000000' }, 'redelivered: still once');
  },
);

t.test('without claims (USAGE_IDENTITY=timestamp) no partials are written, and the seconds are read raw', async (t) => {
  const { infra, ch, db, acct, meter, writer } = await openHourMeter(t, 'partials-timestamp', {
    USAGE_IDENTITY: 'timestamp',
  });
  const now = Date.now();
  for (const key of [201, 202]) {
    // The same record in two messages (a client's retry): ReplacingMergeTree alone keeps it once.
    const data = encodeRow(acct.accountId, meter.id, now - 2_000, 'x', '7', now);
    const read = readMessageRows(acct.accountId, data, 1);
    if ('poison' in read) throw new Error(read.poison);
    await writer.write({ msgs: ['m'], rowsOf: [read.rows], chunks: [data], rows: 1, keys: [key] }, () => undefined);
  }
  const rs = await ch.query({
    query: `SELECT count() AS n FROM ${db}.${PARTIALS_TABLE} WHERE meter_id = '${meter.id}'`,
    format: 'JSONEachRow',
  });
  t.equal(Number((await rs.json<{ n: string }>())[0]!.n), 0, 'no partials');
  const range = { startMs: Math.floor(now / HOUR_MS) * HOUR_MS, endMs: (Math.floor(now / HOUR_MS) + 1) * HOUR_MS };
  const plan = await meterReadPlan(infra, acct.accountId, meter.id, range);
  t.equal(plan.partialSeconds, undefined, 'none planned');
  t.equal(plan.rawRanges.length, 1, 'the marked second is read raw');
  const [r] = await queryUsageTotals(ch, db, [
    { accountId: acct.accountId, meterId: meter.id, type: 'counter', ...range, neverCorrected: true },
  ]);
  t.same({ count: r!.count, sum: r!.sum }, { count: 1, sum: '7.000000000' }, 'the record once');
});
