import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { sweptThrough } from '../../services/domain/usage/rollups-store.js';
import { MAX_GROUPS } from '../../services/domain/usage/query.js';
import { iso, postJson, startConsumer, storedCount } from './ingest-helpers.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

interface Rec {
  id: string;
  ts: number;
  value: number;
  dimensions: Record<string, string>;
}

interface UsageAnswer {
  value: number;
  count: number;
  data: { start: string; value: number; count: number }[];
  groups?: {
    dimensions: Record<string, string | null>;
    value: number;
    count: number;
    data: { start: string; value: number; count: number }[];
  }[];
}

t.test(
  'dimensions: validation, declared keys, group-by and filters equal a local model, unique counts equal local sets',
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
    const newMeter = async (body: object) => {
      const res = await postJson(api.url, '/v1/meters', W, { name: 'm', unit: 'tokens', ...body });
      if (res.status !== 201) throw new Error(`meter create ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { id: string; dimensions: string[]; unique_by: string | null };
    };
    await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');

    const now = Date.now();
    const open = await newMeter({ aggregation: 'sum' });
    t.same(open.dimensions, [], 'a meter declares no dimensions by default');
    const declared = await newMeter({ aggregation: 'sum', dimensions: ['model', 'region'] });
    const users = await newMeter({ aggregation: 'unique_count', unique_by: 'user', dimensions: ['user', 'model'] });

    t.test('record validation: 422 per record with field paths', async (t) => {
      const bad = await postJson(api.url, `/v1/meters/${open.id}/usage`, W, {
        value: 1,
        timestamp: iso(now),
        dimensions: { Model: 'x', ok: '', long: 'x'.repeat(257), n: 5 },
      });
      t.equal(bad.status, 422);
      const fields = (bad.body.errors as { field: string }[]).map((e) => e.field).sort();
      t.same(fields, ['dimensions.long', 'dimensions.n', 'dimensions.ok'], 'values: empty, too long, not a string');
      const badKey = await postJson(api.url, `/v1/meters/${open.id}/usage`, W, {
        value: 1,
        timestamp: iso(now),
        dimensions: { 'Model-X': 'x' },
      });
      t.same(badKey.body.errors, [
        {
          field: 'dimensions.Model-X',
          message: 'must be lowercase letters, digits and underscores (1 to 64 characters)',
        },
      ]);
      const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
      t.equal(
        (await postJson(api.url, `/v1/meters/${open.id}/usage`, W, { value: 1, timestamp: iso(now), dimensions: many }))
          .status,
        422,
        '17 keys',
      );
      const batch = await postJson(api.url, `/v1/meters/${declared.id}/usage`, W, [
        { value: 1, timestamp: iso(now), id: 'v-ok', dimensions: { model: 'a' } },
        { value: 1, timestamp: iso(now), id: 'v-bad', dimensions: { model: 'a', colour: 'red' } },
      ]);
      t.equal(batch.status, 202);
      t.equal(batch.body.results[1].status, 'rejected');
      t.equal(
        batch.body.results[1].error.errors[0].field,
        'dimensions.colour',
        'an undeclared key is refused on that record',
      );
      const cross = await postJson(api.url, '/v1/usage', W, [
        { meter_id: declared.id, value: 1, timestamp: iso(now), dimensions: { region: 7 } },
      ]);
      t.equal(cross.status, 422);
      t.equal(cross.body.errors[0].field, '[0].dimensions.region', 'batch across meters names [index].dimensions.key');
    });

    t.test('declared dimensions can be added, not removed', async (t) => {
      const removed = await fetch(`${api.url}/v1/meters/${declared.id}`, {
        method: 'PATCH',
        headers: { authorization: W, 'content-type': 'application/json' },
        body: JSON.stringify({ dimensions: ['model'] }),
      });
      t.equal(removed.status, 422);
      t.match(((await removed.json()) as any).errors[0], { field: 'dimensions', message: /region/ });
      const added = await fetch(`${api.url}/v1/meters/${declared.id}`, {
        method: 'PATCH',
        headers: { authorization: W, 'content-type': 'application/json' },
        body: JSON.stringify({ dimensions: ['model', 'region', 'tier'] }),
      });
      t.equal(added.status, 200);
      t.same(((await added.json()) as any).dimensions, ['model', 'region', 'tier']);
      await waitUntil(
        async () =>
          (
            await postJson(api.url, `/v1/meters/${declared.id}/usage`, W, {
              value: 1,
              timestamp: iso(now),
              id: 'tiered',
              dimensions: { tier: 'gold' },
            })
          ).status === 202,
        'the added key to be accepted by the ingress',
      );
      const uq = await postJson(api.url, '/v1/meters', W, { name: 'u', unit: 'users', aggregation: 'unique_count' });
      t.match(uq.body.errors, [{ field: 'unique_by', message: /required/ }]);
    });

    t.test('randomised records with retries: every group of every window equals the model', async (t) => {
      let seed = 18;
      const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const pick = <T>(a: T[]) => a[Math.floor(rand() * a.length)]!;
      const recs: Rec[] = [];
      for (let i = 0; i < 2400; i++) {
        // Mostly closed hours of the last 6 days (served from rollups), some in the still-filling hour.
        const ts =
          i % 10 === 0
            ? now - Math.floor(rand() * 20 * 60_000) - 1
            : now - 6 * DAY + Math.floor(rand() * (6 * DAY - HOUR));
        const dimensions: Record<string, string> = {};
        const model = pick(['gpt-x', 'gpt-y', "o'1\tmini", '']);
        if (model) dimensions.model = model;
        dimensions.region = pick(['eu', 'us']);
        dimensions.user = `u${Math.floor(rand() * 150)}`;
        recs.push({ id: `r${i}`, ts, value: 1 + Math.floor(rand() * 1000), dimensions });
      }
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
      const retried = recs.filter(() => rand() < 0.25);
      await send(open.id, recs.slice(0, 1200));
      await send(open.id, [...recs.slice(1200), ...retried]);
      const userRecs = recs.map((r) => ({
        ...r,
        dimensions: { user: r.dimensions.user!, ...(r.dimensions.model ? { model: r.dimensions.model } : {}) },
      }));
      await send(users.id, [...userRecs, ...userRecs.slice(0, 300)]);
      await waitUntil(
        async () =>
          (await storedCount(infra, open.id)) === recs.length && (await storedCount(infra, users.id)) === recs.length,
        'every record stored',
        30_000,
        100,
      );

      const startDate = iso(now - 7 * DAY).slice(0, 10);
      const endDate = iso(now).slice(0, 10);
      const startMs = Date.parse(`${startDate}T00:00:00Z`);
      const days = Math.round((Date.parse(`${endDate}T00:00:00Z`) + DAY - startMs) / DAY);
      const dayOf = (ts: number) => Math.floor((ts - startMs) / DAY);
      const keyOf = (r: Rec, by: string[]) => JSON.stringify(by.map((k) => r.dimensions[k] ?? null));

      const model = (rs: Rec[], by: string[]) => {
        const groups = new Map<string, { value: number; count: number; days: { value: number; count: number }[] }>();
        for (const r of rs) {
          const k = keyOf(r, by);
          let g = groups.get(k);
          if (!g)
            groups.set(
              k,
              (g = { value: 0, count: 0, days: Array.from({ length: days }, () => ({ value: 0, count: 0 })) }),
            );
          g.value += r.value;
          g.count++;
          g.days[dayOf(r.ts)]!.value += r.value;
          g.days[dayOf(r.ts)]!.count++;
        }
        return groups;
      };
      const compare = (t: Test, body: UsageAnswer, rs: Rec[], by: string[]) => {
        const want = model(rs, by);
        t.equal(body.groups!.length, want.size, `${want.size} groups`);
        let mismatches = 0;
        for (const g of body.groups!) {
          const w = want.get(JSON.stringify(by.map((k) => g.dimensions[k])));
          if (!w || w.value !== g.value || w.count !== g.count || g.data.length !== days) mismatches++;
          else
            g.data.forEach(
              (d, i) => (mismatches += d.value === w.days[i]!.value && d.count === w.days[i]!.count ? 0 : 1),
            );
        }
        t.equal(mismatches, 0, 'every group and every day window equals the model');
        t.equal(body.count, rs.length, 'the total is every matching record once');
      };
      // Rollups exist for the closed hours (so the read merges rollup and raw rows).
      await waitUntil(
        async () => {
          const rs = await ch.query({
            query: `SELECT count() AS c FROM ${db}.usage_hourly FINAL WHERE meter_id = '${open.id}' AND length(dim_keys) > 0`,
            format: 'JSONEachRow',
          });
          return Number((await rs.json<{ c: string }>())[0]!.c) > 100;
        },
        'closed hours rolled up per dimension set',
        30_000,
        100,
      );

      const q = `start_date=${startDate}&end_date=${endDate}&window=day`;
      const byModelRegion = await get(`/v1/meters/${open.id}/usage?${q}&group_by=model,region`);
      t.equal(byModelRegion.status, 200);
      compare(t, byModelRegion.body, recs, ['model', 'region']);
      const filtered = await get(
        `/v1/meters/${open.id}/usage?${q}&group_by=region&filter[model]=gpt-x&filter[model]=${encodeURIComponent("o'1\tmini")}`,
      );
      compare(
        t,
        filtered.body,
        recs.filter((r) => r.dimensions.model === 'gpt-x' || r.dimensions.model === "o'1\tmini"),
        ['region'],
      );
      t.same(filtered.body.filters, { model: ['gpt-x', "o'1\tmini"] });
      const plain = await get(`/v1/meters/${open.id}/usage?${q}&filter[region]=eu`);
      t.equal(
        plain.body.count,
        recs.filter((r) => r.dimensions.region === 'eu').length,
        'a filter without group_by filters the total',
      );
      t.equal(plain.body.groups, undefined);

      // unique_count: distinct users per day window, of the whole range, and per model group.
      const uniq = await get(`/v1/meters/${users.id}/usage?${q}&group_by=model`);
      const setOf = (rs: Rec[]) => new Set(rs.map((r) => r.dimensions.user)).size;
      t.equal(uniq.body.value, setOf(recs), 'distinct users of the range (not the sum of days)');
      t.same(
        uniq.body.data.map((d: { value: number }) => d.value),
        Array.from({ length: days }, (_, i) => setOf(recs.filter((r) => dayOf(r.ts) === i))),
        'distinct users per day',
      );
      for (const g of uniq.body.groups as NonNullable<UsageAnswer['groups']>) {
        const inGroup = recs.filter((r) => (r.dimensions.model ?? null) === g.dimensions.model);
        t.equal(g.value, setOf(inGroup), `distinct users of model ${g.dimensions.model}`);
      }
      const hourly = await get(`/v1/meters/${users.id}/usage?start_date=${endDate}&end_date=${endDate}&window=hour`);
      const todayStart = Date.parse(`${endDate}T00:00:00Z`);
      t.same(
        hourly.body.data.map((d: { value: number }) => d.value),
        Array.from({ length: 24 }, (_, h) =>
          setOf(recs.filter((r) => r.ts >= todayStart + h * HOUR && r.ts < todayStart + (h + 1) * HOUR)),
        ),
        'distinct users per hour (rollup and raw hours alike)',
      );
    });

    t.test('read validation and the group cap', async (t) => {
      const undeclared = await get(`/v1/meters/${declared.id}/usage?group_by=colour`);
      t.equal(undeclared.status, 422);
      t.equal(undeclared.body.errors[0].field, 'group_by');
      t.equal((await get(`/v1/meters/${open.id}/usage?group_by=Model`)).status, 422);
      t.equal((await get(`/v1/meters/${open.id}/usage?filter[Bad-Key]=x`)).body.errors[0].field, 'filter[Bad-Key]');
      const many = Array.from({ length: MAX_GROUPS + 1 }, (_, i) => ({
        value: 1,
        timestamp: iso(now - 1000),
        id: `cap-${i}`,
        dimensions: { session: `s${i}` },
      }));
      for (let i = 0; i < many.length; i += 1000)
        t.equal((await postJson(api.url, `/v1/meters/${open.id}/usage`, W, many.slice(i, i + 1000))).status, 202);
      await waitUntil(
        async () => (await get(`/v1/meters/${open.id}/usage?filter[session]=s${MAX_GROUPS}`)).body.count === 1,
        'the capped records visible',
      );
      const capped = await get(`/v1/meters/${open.id}/usage?group_by=session`);
      t.equal(capped.status, 422);
      t.equal(capped.body.code, 'too_many_groups');
      const narrowed = await get(`/v1/meters/${open.id}/usage?group_by=session&filter[session]=s1&filter[session]=s2`);
      t.equal(narrowed.body.groups.length, 2, 'a filter brings the answer under the cap');
      // window=none: the one-query read stops at MAX_GROUPS cells in ClickHouse and says why.
      const cappedTotals = await get(`/v1/meters/${open.id}/usage?group_by=session&window=none`);
      t.equal(cappedTotals.status, 422);
      t.equal(cappedTotals.body.code, 'too_many_groups');
      t.equal(cappedTotals.body.errors[0].field, 'group_by');
      // 20 groups × 300 days of hours is past MAX_GROUP_WINDOWS values: refused on the window, not truncated.
      const twenty = Array.from({ length: 20 }, (_, i) => `filter[session]=s${i}`).join('&');
      const longRange = `start_date=${iso(now - 300 * DAY).slice(0, 10)}&end_date=${iso(now).slice(0, 10)}&window=hour`;
      const cappedWindows = await get(`/v1/meters/${open.id}/usage?${longRange}&group_by=session&${twenty}`);
      t.equal(cappedWindows.status, 422);
      t.equal(cappedWindows.body.errors[0].field, 'window');
    });

    t.test(
      'a legal group-by answer whose unswept rows per counted value pass the cell bound is still answered',
      async (t) => {
        // 11 models × 100 users in the still-filling hour, the users filtered (so counted from rows per user):
        // 1,100 raw (model, user) rows, more than the 1,000 cells a window=none answer may hold — but 11 groups.
        const counted = await newMeter({
          aggregation: 'unique_count',
          unique_by: 'user',
          dimensions: ['user', 'model'],
        });
        const userIds = Array.from({ length: 100 }, (_, i) => `u${i}`);
        const recs = userIds.flatMap((user, u) =>
          Array.from({ length: 11 }, (_, m) => ({
            value: 1,
            timestamp: iso(now - 1000),
            id: `b-${u}-${m}`,
            dimensions: { user, model: `m${m}` },
          })),
        );
        for (let i = 0; i < recs.length; i += 1000)
          t.equal((await postJson(api.url, `/v1/meters/${counted.id}/usage`, W, recs.slice(i, i + 1000))).status, 202);
        await waitUntil(async () => (await storedCount(infra, counted.id)) === recs.length, 'the records stored');
        const read = await get(
          `/v1/meters/${counted.id}/usage?window=none&group_by=model&${userIds.map((u) => `filter[user]=${u}`).join('&')}`,
        );
        t.equal(read.status, 200);
        t.equal(read.body.value, 100, 'distinct users of the range');
        t.same(
          read.body.groups.map((g: { dimensions: { model: string }; value: number; count: number }) => [
            g.dimensions.model,
            g.value,
            g.count,
          ]),
          Array.from({ length: 11 }, (_, m) => [`m${m}`, 100, 100]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
          'every model: 100 users, 100 records',
        );
      },
    );
  },
);
