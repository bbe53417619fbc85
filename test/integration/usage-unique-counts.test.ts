/**
 * Unique counts from per-hour distinct sets (services/domain/usage/unique-rollups-store.ts): randomised records of a
 * unique_count meter over 33 days (two months), with retries, records without the unique dimension, late records into
 * swept hours, cancellations and a replacement — every hour, day, month and `none` window, overall and per
 * group of another dimension, with and without a filter, equals a local Set's size. Real API, consumer,
 * sweeper, ClickHouse and Postgres.
 */
import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { sweptThrough } from '../../services/domain/usage/rollups-store.js';
import { UNIQUE_ROLLUP_TABLE } from '../../services/domain/usage/unique-rollups-store.js';
import { iso, postJson, startConsumer, waitSettled } from './ingest-helpers.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Rec {
  id: string;
  ts: number;
  value: number;
  dimensions: Record<string, string>;
}

interface Window {
  start: string;
  value?: number;
  count: number;
}

interface UsageAnswer {
  value: number;
  count: number;
  data: Window[];
  groups?: { dimensions: Record<string, string | null>; value: number; count: number; data: Window[] }[];
}

t.test(
  'unique counts: every window and group equals a local set, after sweeps, late records and corrections',
  async (t) => {
    const config = await isolatedConfig(t);
    const api = await startApi(t, config);
    await startConsumer(t, config, { maxWaitMs: 100 });
    const { infra } = api;
    const ch = infra.clickhouse;
    const db = config.CLICKHOUSE_DATABASE;
    const acct = await createTestAccount(infra);
    const W = acct.auth.write.authorization;
    const R = acct.auth.read.authorization;
    const get = async (path: string) => {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: R } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const correct = async (meterId: string, body: unknown) => {
      const res = await postJson(api.url, `/v1/meters/${meterId}/usage/corrections`, W, body);
      if (res.status !== 201) throw new Error(`correction ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    };
    const send = async (meterId: string, batch: Rec[]) => {
      for (let i = 0; i < batch.length; i += 500) {
        const res = await postJson(
          api.url,
          `/v1/meters/${meterId}/usage`,
          W,
          batch
            .slice(i, i + 500)
            .map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts), dimensions: r.dimensions })),
        );
        if (res.status !== 202 || res.body.rejected !== 0)
          throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      }
    };
    await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');
    const res = await postJson(api.url, '/v1/meters', W, {
      name: 'active users',
      unit: 'users',
      aggregation: 'unique_count',
      unique_by: 'user',
      dimensions: ['user', 'region', 'plan'],
    });
    t.equal(res.status, 201);
    const meterId = res.body.id as string;

    const now = Date.now();
    let seed = 1_000_003;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    const record = (id: string, ts: number): Rec => {
      const dimensions: Record<string, string> = { region: pick(['eu', 'us', 'ap']) };
      if (rand() < 0.9) dimensions.user = `u${Math.floor(rand() * 250)}`; // the rest count, but are no one
      if (rand() < 0.5) dimensions.plan = pick(['free', 'pro']);
      return { id, ts, value: 1 + Math.floor(rand() * 9), dimensions };
    };
    // Two months of closed hours (rolled up by the sweep) and some in the still-filling hour (read raw).
    const recs: Rec[] = Array.from({ length: 2000 }, (_, i) =>
      record(
        `r${i}`,
        i % 12 === 0
          ? now - Math.floor(rand() * 15 * 60_000) - 1
          : now - 33 * DAY + Math.floor(rand() * (33 * DAY - 2 * HOUR)),
      ),
    );
    await send(meterId, recs);
    await send(
      meterId,
      recs.filter(() => rand() < 0.2),
    ); // retries count once

    const startDate = iso(now - 34 * DAY).slice(0, 10);
    const endDate = iso(now).slice(0, 10);
    const rangeEnd = Date.parse(`${endDate}T00:00:00Z`) + DAY;
    const hourDay = iso(now - 3 * DAY).slice(0, 10);
    const windowEnds = (data: Window[], end: number) =>
      data.map((d, i) => [Date.parse(d.start), i + 1 < data.length ? Date.parse(data[i + 1]!.start) : end] as const);
    const usersIn = (rs: Rec[], from: number, to: number) =>
      new Set(rs.filter((r) => r.ts >= from && r.ts < to && r.dimensions.user).map((r) => r.dimensions.user)).size;
    const countIn = (rs: Rec[], from: number, to: number) => rs.filter((r) => r.ts >= from && r.ts < to).length;

    /** Every window (and group, and filtered read) of hour, day, month and none equals the local sets of `live`. */
    const compare = async (t: Test, live: Rec[], what: string) => {
      const reads: [string, number, (r: Rec) => boolean][] = [
        [`start_date=${startDate}&end_date=${endDate}&window=day`, rangeEnd, () => true],
        [`start_date=${startDate}&end_date=${endDate}&window=month`, rangeEnd, () => true],
        [`start_date=${startDate}&end_date=${endDate}&window=none`, rangeEnd, () => true],
        [`start_date=${hourDay}&end_date=${endDate}&window=hour`, rangeEnd, () => true],
        [
          `start_date=${startDate}&end_date=${endDate}&window=day&filter[plan]=pro`,
          rangeEnd,
          (r) => r.dimensions.plan === 'pro',
        ],
      ];
      for (const [q, end, keep] of reads) {
        const kept = live.filter(keep);
        for (const grouped of [false, true]) {
          const { status, body } = (await get(
            `/v1/meters/${meterId}/usage?${q}${grouped ? '&group_by=region' : ''}`,
          )) as { status: number; body: UsageAnswer };
          t.equal(status, 200, q);
          const spans = windowEnds(body.data, end);
          const from = spans[0]![0];
          t.equal(body.value, usersIn(kept, from, end), `${what}: distinct users of the range (${q})`);
          t.equal(body.count, countIn(kept, from, end), `${what}: records of the range (${q})`);
          t.same(
            body.data.map((d) => d.value ?? 0),
            spans.map(([s, e]) => usersIn(kept, s, e)),
            `${what}: distinct users per window (${q})`,
          );
          if (!grouped) continue;
          const regions = [
            ...new Set(kept.filter((r) => r.ts >= from && r.ts < end).map((r) => r.dimensions.region!)),
          ].sort();
          t.same(
            body.groups!.map((g) => g.dimensions.region),
            regions,
            `${what}: one group per region (${q})`,
          );
          let mismatches = 0;
          for (const g of body.groups!) {
            const inGroup = kept.filter((r) => r.dimensions.region === g.dimensions.region);
            if (g.value !== usersIn(inGroup, from, end) || g.count !== countIn(inGroup, from, end)) mismatches++;
            g.data.forEach(
              (d, i) => (mismatches += (d.value ?? 0) === usersIn(inGroup, spans[i]![0], spans[i]![1]) ? 0 : 1),
            );
          }
          t.equal(mismatches, 0, `${what}: every group of every window (${q}&group_by=region)`);
        }
      }
      // Filtering on the unique dimension itself is answered from the rows per value: the same sets.
      const one = (
        await get(
          `/v1/meters/${meterId}/usage?start_date=${startDate}&end_date=${endDate}&window=none&filter[user]=u7&filter[user]=u8`,
        )
      ).body as UsageAnswer;
      const pair = live.filter((r) => r.dimensions.user === 'u7' || r.dimensions.user === 'u8');
      t.equal(one.value, usersIn(pair, 0, rangeEnd), `${what}: filter on the unique dimension`);
      t.equal(one.count, pair.length, `${what}: its records`);
    };
    const visible = (live: Rec[]) => async () =>
      (await get(`/v1/meters/${meterId}/usage?start_date=${startDate}&end_date=${endDate}&window=none`)).body.count ===
      live.length;

    let live = recs;
    await waitUntil(visible(live), 'every record visible', 60_000, 100);
    await t.test('after the sweep', async (t) => {
      await waitSettled(infra, meterId);
      const rs = await ch.query({
        query: `SELECT count() AS n FROM ${db}.${UNIQUE_ROLLUP_TABLE} WHERE meter_id = '${meterId}'`,
        format: 'JSONEachRow',
      });
      t.ok(Number((await rs.json<{ n: string }>())[0]!.n) > 0, 'closed hours carry distinct sets');
      await compare(t, live, 'swept');
    });

    await t.test('late records into swept hours: new and known users', async (t) => {
      const late = Array.from({ length: 150 }, (_, i) => {
        const r = record(`late-${i}`, now - 32 * DAY + Math.floor(rand() * 30 * DAY));
        if (i % 2) r.dimensions.user = `late-user-${i}`;
        return r;
      });
      await send(meterId, late);
      live = [...live, ...late];
      await waitUntil(visible(live), 'the late records visible', 60_000, 100);
      await compare(t, live, 'late');
    });

    await t.test('cancellations and a replacement', async (t) => {
      const cancelled = new Set(live.filter(() => rand() < 0.1).map((r) => r.id));
      await correct(meterId, { cancel: [...cancelled] });
      live = live.filter((r) => !cancelled.has(r.id));
      await compare(t, live, 'cancelled');
      const from = Date.parse(`${iso(now - 20 * DAY).slice(0, 10)}T00:00:00Z`);
      const to = from + 3 * DAY + 5 * HOUR;
      const replacement = Array.from({ length: 60 }, (_, i) =>
        record(`new-${i}`, from + Math.floor(rand() * (to - from))),
      );
      await correct(meterId, {
        replace: {
          start: iso(from),
          end: iso(to),
          records: replacement.map((r) => ({
            id: r.id,
            value: r.value,
            timestamp: iso(r.ts),
            dimensions: r.dimensions,
          })),
        },
      });
      live = [...live.filter((r) => r.ts < from || r.ts >= to), ...replacement];
      await compare(t, live, 'replaced');
    });
  },
);
