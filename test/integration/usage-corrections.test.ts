import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { sweptThrough } from '../../services/domain/usage/rollups-store.js';
import { UsageShards } from '../../shared/clients/usage-shards.js';
import { insertCorrection } from '../../services/domain/corrections/store.js';
import { completePendingCorrections } from '../../services/domain/corrections/apply.js';
import { iso, postJson, startConsumer, storedIds } from './ingest-helpers.js';

/**
 * Usage corrections (issue 18 §4) against real servers: randomised records with dimensions and retries, then
 * cancellations and a replacement; every group of every day and hour window, the totals billing reads, unique
 * counts and histogram extremes equal a local model of the records that still count.
 */
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
  value: number | null;
  count: number;
  max?: number | null;
  p99?: number | null;
}
interface UsageAnswer {
  value: number;
  count: number;
  max?: number;
  data: Window[];
  groups?: { dimensions: Record<string, string | null>; value: number; count: number; data: Window[] }[];
}

t.test('corrections: cancel and replace stop counting everywhere; idempotent; isolated', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const { infra } = api;
  const ch = infra.clickhouse;
  const db = config.CLICKHOUSE_DATABASE;
  const acct = await createTestAccount(infra);
  const other = await createTestAccount(infra, { name: 'Other' });
  const W = acct.auth.write.authorization;
  const R = acct.auth.read.authorization;
  const get = async (path: string, authorization = R) => {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const correct = (meterId: string, body: unknown, o: { key?: string; authorization?: string } = {}) =>
    fetch(`${api.url}/v1/meters/${meterId}/usage/corrections`, {
      method: 'POST',
      headers: {
        authorization: o.authorization ?? W,
        'content-type': 'application/json',
        ...(o.key ? { 'idempotency-key': o.key } : {}),
      },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
  const newMeter = async (authorization: string, body: object) => {
    const res = await postJson(api.url, '/v1/meters', authorization, { name: 'm', unit: 'tokens', ...body });
    if (res.status !== 201) throw new Error(`meter create ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string };
  };
  const send = async (meterId: string, batch: Rec[], authorization = W) => {
    for (let i = 0; i < batch.length; i += 500) {
      const res = await postJson(
        api.url,
        `/v1/meters/${meterId}/usage`,
        authorization,
        batch
          .slice(i, i + 500)
          .map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts), dimensions: r.dimensions })),
      );
      if (res.status !== 202 || res.body.rejected !== 0)
        throw new Error(`batch refused: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
  };
  await waitUntil(async () => (await sweptThrough(ch, db)) !== undefined, 'the sweeper to set its watermark');

  const now = Date.now();
  const sums = await newMeter(W, { aggregation: 'sum' });
  const users = await newMeter(W, { aggregation: 'unique_count', unique_by: 'user' });
  const latency = await newMeter(W, { type: 'histogram', aggregation: 'p99' });
  const theirs = await newMeter(other.auth.write.authorization, { aggregation: 'sum' });

  let seed = 18;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const recs: Rec[] = [];
  for (let i = 0; i < 1500; i++) {
    // Mostly closed hours of the last 6 days (rollups), some in the still-filling hour (raw rows).
    const ts =
      i % 10 === 0 ? now - Math.floor(rand() * 20 * 60_000) - 1 : now - 6 * DAY + Math.floor(rand() * (6 * DAY - HOUR));
    const dimensions: Record<string, string> = { region: pick(['eu', 'us']), user: `u${Math.floor(rand() * 120)}` };
    const model = pick(['gpt-x', 'gpt-y', '']);
    if (model) dimensions.model = model;
    recs.push({ id: `r${i}`, ts, value: 1 + Math.floor(rand() * 1000), dimensions });
  }
  const retried = recs.filter(() => rand() < 0.2);
  for (const m of [sums.id, users.id]) {
    await send(m, recs.slice(0, 800));
    await send(m, [...recs.slice(800), ...retried]);
  }
  // The other account uses the same record ids on its own meter.
  await send(theirs.id, recs.slice(0, 300), other.auth.write.authorization);
  await waitUntil(
    async () =>
      (await storedIds(infra, sums.id)).size === recs.length && (await storedIds(infra, users.id)).size === recs.length,
    'every record stored',
    30_000,
    100,
  );
  await waitUntil(
    async () => {
      const rs = await ch.query({
        query: `SELECT count() AS c FROM ${db}.usage_hourly FINAL WHERE meter_id = '${sums.id}'`,
        format: 'JSONEachRow',
      });
      return Number((await rs.json<{ c: string }>())[0]!.c) > 100;
    },
    'closed hours rolled up',
    30_000,
    100,
  );

  const startDate = iso(now - 7 * DAY).slice(0, 10);
  const endDate = iso(now).slice(0, 10);
  const startMs = Date.parse(`${startDate}T00:00:00Z`);
  const days = Math.round((Date.parse(`${endDate}T00:00:00Z`) + DAY - startMs) / DAY);
  const q = `start_date=${startDate}&end_date=${endDate}`;
  // A late record is read from its hour's recompute, which lands a moment after its raw row: wait for the read path.
  for (const m of [sums.id, users.id])
    await waitUntil(
      async () => (await get(`/v1/meters/${m}/usage?${q}&window=none`)).body.count === recs.length,
      'every record read',
      30_000,
      100,
    );
  const keyOf = (r: Rec, by: string[]) => JSON.stringify(by.map((k) => r.dimensions[k] ?? null));

  /** Every group of every window (day over the range, hour over the days given) and the totals equal the model. */
  const compare = async (t: Test, live: Rec[], what: string, liveUsers = live) => {
    const windows: [string, number, number, (ts: number) => number][] = [
      [`${q}&window=day`, startMs, days, (ts) => Math.floor((ts - startMs) / DAY)],
      [
        `start_date=${iso(now - 3 * DAY).slice(0, 10)}&end_date=${iso(now - 2 * DAY).slice(0, 10)}&window=hour`,
        Date.parse(`${iso(now - 3 * DAY).slice(0, 10)}T00:00:00Z`),
        48,
        (ts) => 0,
      ],
    ];
    windows[1]![3] = (ts) => Math.floor((ts - windows[1]![1]) / HOUR);
    for (const [query, from, n, slot] of windows) {
      const inRange = live.filter((r) => r.ts >= from && r.ts < from + n * (query.endsWith('hour') ? HOUR : DAY));
      const body = (await get(`/v1/meters/${sums.id}/usage?${query}&group_by=model,region`)).body as UsageAnswer;
      const want = new Map<string, { value: number; count: number; w: { value: number; count: number }[] }>();
      for (const r of inRange) {
        const k = keyOf(r, ['model', 'region']);
        let g = want.get(k);
        if (!g) want.set(k, (g = { value: 0, count: 0, w: Array.from({ length: n }, () => ({ value: 0, count: 0 })) }));
        g.value += r.value;
        g.count++;
        g.w[slot(r.ts)]!.value += r.value;
        g.w[slot(r.ts)]!.count++;
      }
      let mismatches = 0;
      for (const g of body.groups!) {
        const w = want.get(JSON.stringify([g.dimensions.model, g.dimensions.region]));
        if (!w || w.value !== g.value || w.count !== g.count || g.data.length !== n) mismatches++;
        else
          g.data.forEach(
            (d, i) => (mismatches += d.count === w.w[i]!.count && (d.value ?? 0) === w.w[i]!.value ? 0 : 1),
          );
      }
      t.equal(body.groups!.length, want.size, `${what}: ${want.size} groups (${query})`);
      t.equal(mismatches, 0, `${what}: every group of every window equals the model (${query})`);
      t.equal(body.count, inRange.length, `${what}: the total counts every live record once (${query})`);
    }
    // window=none is queryUsageTotals, the rule billing prices with.
    const total = (await get(`/v1/meters/${sums.id}/usage?${q}&window=none`)).body as UsageAnswer;
    t.equal(
      total.value,
      live.reduce((s, r) => s + r.value, 0),
      `${what}: the billed total`,
    );
    const uniq = (await get(`/v1/meters/${users.id}/usage?${q}&window=day`)).body as UsageAnswer;
    const setOf = (rs: Rec[]) => new Set(rs.map((r) => r.dimensions.user)).size;
    t.equal(uniq.value, setOf(liveUsers), `${what}: distinct users of the range`);
    t.same(
      uniq.data.map((d) => d.value),
      Array.from({ length: days }, (_, i) => setOf(liveUsers.filter((r) => Math.floor((r.ts - startMs) / DAY) === i))),
      `${what}: distinct users per day`,
    );
  };
  await t.test('before any correction', (t) => compare(t, recs, 'uncorrected'));

  // Cancel ~10% of the records in three requests; some ids named twice (across and within requests).
  const cancelled = recs.filter(() => rand() < 0.1);
  const ids = cancelled.map((r) => r.id);
  const first = await correct(sums.id, { cancel: ids.slice(0, 60) }, { key: 'cancel-1' });
  t.equal(first.status, 201, JSON.stringify(first.body));
  t.match(first.body, { type: 'cancel', state: 'applied', meter_id: sums.id, created_by: { user_id: acct.userId } });
  t.equal(first.body.cancel.length, 60);
  t.equal((await correct(sums.id, { cancel: [...ids.slice(50), ids[60]!, 'ghost-1'] })).status, 201);
  t.equal((await correct(users.id, { cancel: ids })).status, 201);

  await t.test('Idempotency-Key: a replay answers the same and applies nothing twice', async (t) => {
    const replay = await correct(sums.id, { cancel: ids.slice(0, 60) }, { key: 'cancel-1' });
    t.equal(replay.status, 201);
    t.same(replay.body, first.body, 'the same correction, the same answer');
    const list = await get(`/v1/meters/${sums.id}/usage/corrections?per_page=100`);
    t.equal(list.status, 200);
    t.equal(list.body.pagination.total, 2, 'two corrections of the meter, not three');
    t.same(list.body.data.map((c: any) => c.id).at(-1), first.body.id, 'newest first');
    t.match(list.body.data[0], { state: 'applied', created_by: { user_id: acct.userId }, created_at: String });
  });

  let live = recs.filter((r) => !ids.includes(r.id));
  await t.test('after cancellations', (t) => compare(t, live, 'cancelled'));

  await t.test('a cancelled id that arrives later does not count; a retry of a cancelled record neither', async (t) => {
    const ghost: Rec = { id: 'ghost-1', ts: now - 4 * DAY, value: 777, dimensions: { region: 'eu', user: 'ghost' } };
    await send(sums.id, [ghost, cancelled[0]!]);
    await waitUntil(async () => (await storedIds(infra, sums.id)).has('ghost-1'), 'the ghost record stored');
    await compare(t, live, 'after late arrivals');
  });

  await t.test(
    'another account: its records with the same ids still count; our corrections on its meter are 404',
    async (t) => {
      const theirsTotal = (await get(`/v1/meters/${theirs.id}/usage?${q}&window=none`, other.auth.read.authorization))
        .body;
      t.equal(theirsTotal.count, 300);
      t.equal(
        theirsTotal.value,
        recs.slice(0, 300).reduce((s, r) => s + r.value, 0),
      );
      t.equal((await correct(theirs.id, { cancel: ['r1'] })).status, 404);
      t.equal((await get(`/v1/meters/${theirs.id}/usage/corrections`)).status, 404);
    },
  );

  await t.test('replace a range: its records are cancelled, the given ones counted instead', async (t) => {
    const from = Date.parse(`${iso(now - 3 * DAY).slice(0, 10)}T05:00:00Z`);
    const to = from + 30 * HOUR;
    const replacement: Rec[] = Array.from({ length: 40 }, (_, i) => ({
      id: `new-${i}`,
      ts: from + Math.floor(rand() * (to - from)),
      value: 1 + Math.floor(rand() * 50),
      dimensions: { region: pick(['eu', 'us', 'ap']), user: `u${i}`, ...(i % 3 ? { model: 'gpt-z' } : {}) },
    }));
    const body = {
      replace: {
        start: iso(from),
        end: iso(to),
        records: replacement.map((r) => ({ id: r.id, value: r.value, timestamp: iso(r.ts), dimensions: r.dimensions })),
      },
    };
    const res = await correct(sums.id, body, { key: 'replace-1' });
    t.equal(res.status, 201, JSON.stringify(res.body).slice(0, 400));
    t.same(
      res.body.replace.record_ids,
      replacement.map((r) => r.id),
    );
    t.same((await correct(sums.id, body, { key: 'replace-1' })).body, res.body, 'replayed: same answer');
    const again = await correct(sums.id, body);
    t.equal(again.status, 422, 'the same ids again without the key: taken');
    t.equal(again.body.errors[0].field, 'replace.records[0].id');
    t.equal((await correct(users.id, body)).status, 201, 'the unique-count meter gets the same replacement');
    live = [...live.filter((r) => r.ts < from || r.ts >= to), ...replacement];
    await compare(t, live, 'replaced');
  });

  await t.test('validation: precise problems, nothing recorded', async (t) => {
    const both = await correct(sums.id, {
      cancel: ['a'],
      replace: { start: iso(now - DAY), end: iso(now), records: [] },
    });
    t.equal(both.status, 422);
    t.equal((await correct(sums.id, {})).body.errors[0].field, 'cancel');
    t.equal((await correct(sums.id, { cancel: [] })).status, 422);
    const bad = await correct(sums.id, {
      replace: {
        start: iso(now - DAY),
        end: iso(now - HOUR),
        records: [
          { value: -1, timestamp: iso(now - 2 * HOUR) },
          { value: 1, timestamp: iso(now - 2 * DAY) },
        ],
      },
    });
    t.equal(bad.status, 422);
    t.same(
      bad.body.errors.map((e: any) => e.field),
      ['replace.records[0].value', 'replace.records[1].timestamp'],
    );
    t.equal(
      (await correct(sums.id, { replace: { start: iso(now), end: iso(now - HOUR), records: [] } })).body.errors[0]
        .field,
      'replace.end',
    );
    const readOnly = await correct(sums.id, { cancel: ['r1'] }, { authorization: R });
    t.equal(readOnly.status, 403);
    t.equal(
      (await get(`/v1/meters/${sums.id}/usage/corrections?per_page=100`)).body.pagination.total,
      3,
      'refused corrections left no trace',
    );
    await compare(t, live, 'after refused corrections');
  });

  await t.test('histogram: a cancelled outlier leaves max and p99', async (t) => {
    const hourStart = Math.floor((now - 2 * DAY) / HOUR) * HOUR;
    const values = [10, 20, 30, 40, 5000];
    await send(
      latency.id,
      values.map((value, i) => ({ id: `l${i}`, ts: hourStart + i * 60_000, value, dimensions: {} })),
    );
    await waitUntil(async () => (await storedIds(infra, latency.id)).size === values.length, 'latencies stored');
    const day = iso(hourStart).slice(0, 10);
    const read = async () =>
      (await get(`/v1/meters/${latency.id}/usage?start_date=${day}&end_date=${day}&window=none`))
        .body as UsageAnswer & { max: number; p99: number };
    await waitUntil(async () => (await read()).count === 5, 'the hour read');
    t.equal((await read()).max, 5000);
    t.equal((await correct(latency.id, { cancel: ['l4'] })).status, 201);
    const after = await read();
    t.equal(after.count, 4);
    t.equal(after.max, 40, 'max without the cancelled record');
    t.ok(after.p99 <= 40, `p99 ${after.p99} without the cancelled outlier`);
  });

  await t.test('a correction left pending (its process died) is completed by the sweep', async (t) => {
    const victim = live.find((r) => r.ts < now - DAY)!;
    const pending = await insertCorrection(
      infra.pg,
      acct.accountId,
      sums.id,
      { kind: 'cancel', ids: [victim.id] },
      { userId: acct.userId, clientId: 'test' },
    );
    t.equal(pending.state, 'pending');
    const liveUsers = live;
    await compare(t, live, 'pending: not applied yet');
    const shards = await UsageShards.open(config, { quiet: true });
    t.teardown(() => shards.close());
    t.equal(await completePendingCorrections(infra.pg, shards, db, 0), 1, 'one completed');
    live = live.filter((r) => r !== victim);
    await compare(t, live, 'pending completed', liveUsers);
    const list = await get(`/v1/meters/${sums.id}/usage/corrections?per_page=1`);
    t.match(list.body.data[0], { id: pending.id, state: 'applied', applied_at: String });
    t.equal(await completePendingCorrections(infra.pg, shards, db, 0), 0, 'nothing left pending');
  });
});
