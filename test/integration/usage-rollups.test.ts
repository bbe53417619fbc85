import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { checkAllWindows, milliText, type ModelRecord } from '../fixtures/usage-model.js';
import type { MeterType } from '../../shared/meters/record.js';
import { HOUR_MS, sweptThrough } from '../../services/domain/usage/rollups-store.js';
import { usageValue } from '../../services/domain/usage/aggregate.js';
import { queryUsage } from '../../services/domain/usage/query.js';
import { stringifyJson } from '../../shared/money/json.js';
import {
  createMeter,
  iso,
  postJson,
  startConsumer,
  startUsageApi,
  storedCount,
  waitForMeter,
  waitSettled,
  type UsageApi,
} from './ingest-helpers.js';

const DAY = 86_400_000;

async function send(
  api: UsageApi,
  auth: string,
  meterId: string,
  recs: { id: string; ts: number; milli: number }[],
): Promise<void> {
  for (let i = 0; i < recs.length; i += 500) {
    const body = recs
      .slice(i, i + 500)
      .map((r) => ({ id: r.id, value: Number(milliText(r.milli)), timestamp: iso(r.ts) }));
    const res = await postJson(api.url, `/v1/meters/${meterId}/usage`, auth, body);
    if (res.status !== 202 || res.body.rejected !== 0)
      throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }
}

t.test('rollups stay exact under retries, out-of-order and 20-day-late records', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  const { infra: consumerInfra } = await startConsumer(t, config, { maxWaitMs: 100 });
  const infra = api.infra;
  const ch = infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const R = acct.auth.read.authorization;
  await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');

  const now = Date.now();
  let seed = 2026;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
  for (const [type, aggregation] of [
    ['counter', 'sum'],
    ['gauge', 'last'],
    ['histogram', 'p90'],
  ] as [MeterType, string][]) {
    t.test(`${type} ${aggregation}`, async (t) => {
      const meter = await createMeter(infra, acct.accountId, { type, aggregation });
      await waitForMeter(api, meter, W);
      const value = () =>
        type === 'counter' ? Math.floor(rand() * 5_000_000) : Math.floor(rand() * 4_000_000) - 1_000_000;
      const recs: ModelRecord[] = [];
      const add = (ts: number) => recs.push({ id: `${type}-${recs.length}`, ts, milli: value() });
      // Recent records (≤ 10 days old, some in the still-filling hour), then older ones (up to 34 days).
      for (let i = 0; i < 1500; i++) add(now - 10 * DAY + Math.floor(rand() * (10 * DAY - 1000)));
      for (let i = 0; i < 150; i++) add(now - Math.floor(rand() * 30 * 60_000) - 1);
      // On and around month and day boundaries, and ties on the timestamp (gauge last: the greatest id wins).
      for (const b of [monthStart, monthStart - 1, Math.floor(now / DAY) * DAY, Math.floor(now / DAY) * DAY - 1])
        if (b < now - 1000 && b > now - 34 * DAY) add(b), add(b);
      const firstWave = recs.length;
      for (let i = 0; i < 1200; i++) add(now - 34 * DAY + Math.floor(rand() * 24 * DAY)); // 10–34 days old: arrive late
      for (let i = 0; i < 300; i++) add(now - 20 * DAY + Math.floor(rand() * HOUR_MS)); // 20 days late, one hour
      const retried = recs.filter(() => rand() < 0.2);
      const shuffle = <T>(a: T[]) => {
        for (let i = a.length - 1; i > 0; i--) {
          const j = Math.floor(rand() * (i + 1));
          [a[i], a[j]] = [a[j]!, a[i]!];
        }
        return a;
      };
      // Wave 1: the recent records (out of order); its closed hours get rolled up.
      await send(api, W, meter.id, shuffle(recs.slice(0, firstWave)));
      await waitUntil(async () => (await storedCount(infra, meter.id)) === firstWave, 'wave 1 visible', 30_000, 100);
      // Wave 2: the late records, mixed with retries of wave 1 and of themselves, into hours already rolled up.
      const late = recs.slice(firstWave);
      await send(api, W, meter.id, shuffle([...late, ...retried, ...late.filter(() => rand() < 0.2)]));
      t.ok(retried.length / recs.length > 0.1, `${retried.length} of ${recs.length} records re-sent`);
      await waitUntil(
        async () => (await storedCount(infra, meter.id)) === recs.length,
        'every record visible',
        30_000,
        100,
      );

      const startMs = Math.floor((now - 35 * DAY) / DAY) * DAY;
      const endMs = Math.floor(now / DAY) * DAY + DAY;
      const model = { accountId: acct.accountId, meterId: meter.id, type };
      // Exact at once: hours the late records landed in are read raw until the settler has recomputed them.
      await checkAllWindows(t, ch, db, model, recs, startMs, endMs);
      await waitSettled(infra, meter.id);
      const rollupRows = await ch.query({
        query: `SELECT count() AS c FROM ${db}.usage_hourly FINAL WHERE meter_id = '${meter.id}'`,
        format: 'JSONEachRow',
      });
      t.ok(Number((await rollupRows.json<{ c: string }>())[0]!.c) > 100, 'closed hours are served from rollups');
      const worst = await checkAllWindows(t, ch, db, model, recs, startMs, endMs);
      if (type === 'histogram')
        t.comment(`worst percentile rank error over windows of ≥ 100 records: ${(worst * 100).toFixed(2)}%`);

      // The API says what the read path says, through the one usageValue rule.
      const res = await fetch(
        `${api.url}/v1/meters/${meter.id}/usage?window=day&start_date=${iso(startMs).slice(0, 10)}&end_date=${iso(endMs - DAY).slice(0, 10)}`,
        { headers: { authorization: R } },
      );
      const body = (await res.json()) as { value: unknown; count: number; data: { value: unknown; count: number }[] };
      const lib = await queryUsage(ch, db, {
        accountId: acct.accountId,
        meterId: meter.id,
        type,
        startMs,
        endMs,
        window: 'day',
      });
      t.equal(body.count, recs.length, 'API total count');
      t.equal(
        stringifyJson(body.data.map((w) => w.value)),
        stringifyJson(lib.windows.map((w) => usageValue(w, aggregation))),
        'API day values = usageValue of the read path',
      );
    });
  }
  void consumerInfra;
});

t.test('freshness: a record posted now is in the next reads within moments', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const meter = await createMeter(infra, acct.accountId);
  await waitForMeter(api, meter, acct.auth.write.authorization);
  for (const [label, ago] of [
    ['now', 0],
    ['25 days late', 25 * DAY],
  ] as const) {
    const res = await postJson(api.url, `/v1/meters/${meter.id}/usage`, acct.auth.write.authorization, {
      value: 7,
      timestamp: iso(Date.now() - ago),
      id: `fresh-${label}`,
    });
    t.equal(res.status, 202);
    await waitUntil(async () => {
      const r = await fetch(
        `${api.url}/v1/meters/${meter.id}/usage?window=day&start_date=${iso(Date.now() - 30 * DAY).slice(0, 10)}`,
        { headers: acct.auth.read },
      );
      const b = (await r.json()) as { count: number };
      return b.count === (label === 'now' ? 1 : 2);
    }, `the record posted ${label} to be visible`);
    t.pass(`record posted ${label} visible in GET …/usage`);
  }
});
