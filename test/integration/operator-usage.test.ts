import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import {
  AttributedModel,
  createCustomers,
  customerToken,
  deploymentMeter,
  type Customer,
} from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';
import { UsageEmitter } from '../../shared/client/index.js';
import { cloudEventRecordId } from '../../services/ingress/cloudevents.js';

const HOUR = 3_600_000;
const CUSTOMERS = Number(process.env.OPERATOR_TEST_CUSTOMERS ?? 1000);
const RECORDS = Number(process.env.OPERATOR_TEST_RECORDS ?? 100_000);
const RESENT = 0.2;

/**
 * Operator mode end to end (issue 26): one admin emitter records usage for 1,000 customers over 3 deployment
 * meters — 100,000 records through batches (both batch routes), the usage stream (meterline/client's
 * UsageEmitter) and CloudEvents (`subject`), 20 % of them sent twice — and every customer's usage, the
 * group_by=customer answer and each customer's own reads equal a local model exactly.
 */
t.test('one admin emitter, 1,000 customers, 3 deployment meters, exactly counted', async (t) => {
  t.setTimeout(20 * 60_000); // 1,000 customers and 120,000 sends on a shared 2-core machine
  const started = Date.now();
  const took = () => `${Math.round((Date.now() - started) / 1000)} s`;
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 200 });
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const admin = (method: string, path: string, body?: unknown) => callJson(api.url, ADMIN, method, path, body);

  const meters = [
    await deploymentMeter(api.url, ADMIN, { name: 'api-calls', aggregation: 'sum' }),
    await deploymentMeter(api.url, ADMIN, { name: 'logins', aggregation: 'count' }),
    await deploymentMeter(api.url, ADMIN, { name: 'seats', type: 'gauge', aggregation: 'max' }),
  ];
  const customers = await createCustomers(api.url, ADMIN, CUSTOMERS, 'cust');
  t.comment(`${customers.length} customers made (${took()})`);

  // ── the records, and the model of what each (meter, customer) holds ──
  let seed = 26;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // The current hour: what a live emitter sends (late records, and their rollup recomputes, are another test's).
  const now = Date.now() - 5_000;
  const from = Math.max(now - (now % HOUR), now - 30 * 60_000);
  const model = new AttributedModel();
  type Path = 'usage' | 'meter' | 'stream' | 'cloudevents';
  interface Rec {
    path: Path;
    meter: (typeof meters)[number];
    customer: Customer;
    byId: boolean;
    id: string;
    ts: number;
    milli: number;
  }
  const recs: Rec[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const meter = meters[i % 3]!;
    const customer = customers[Math.floor(rand() * customers.length)]!;
    const r = rand();
    const path: Path = r < 0.35 ? 'usage' : r < 0.5 ? 'meter' : r < 0.75 ? 'stream' : 'cloudevents';
    const milli =
      meter.aggregation === 'count'
        ? 1000
        : meter.type === 'gauge'
          ? Math.floor(rand() * 100_000) - 50_000
          : Math.floor(rand() * 100_000);
    const rec: Rec = {
      path,
      meter,
      customer,
      byId: rand() < 0.3,
      id: `r-${i}`,
      ts: from + Math.floor(rand() * (now - from)),
      milli,
    };
    recs.push(rec);
    const storedId = path === 'cloudevents' ? cloudEventRecordId('emitter', rec.id) : rec.id;
    model.add(meter.id, customer.accountId, storedId, rec.ts, milli);
  }
  const resent = recs.filter(() => rand() < RESENT);
  t.comment(`${recs.length} records + ${resent.length} sent again`);

  // ── sending: every path, admin token, each record naming its customer ──
  const native = (r: Rec, withMeter: boolean) => ({
    ...(withMeter ? { meter_id: r.meter.id } : {}),
    value: r.milli / 1000,
    timestamp: new Date(r.ts).toISOString(),
    id: r.id,
    ...(r.byId ? { customer_id: r.customer.id } : { customer: r.customer.externalId }),
  });
  const event = (r: Rec) => ({
    specversion: '1.0',
    id: r.id,
    source: 'emitter',
    type: r.meter.id,
    time: new Date(r.ts).toISOString(),
    subject: r.customer.externalId,
    data: { value: r.milli / 1000 },
  });
  const chunks = <T>(xs: T[], n: number) =>
    Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
  const expectAll = (what: string, body: any, n: number) => {
    if (body?.accepted !== n) throw new Error(`${what}: ${JSON.stringify(body).slice(0, 500)}`);
  };
  const send = async (batch: Rec[]) => {
    const by = (p: Path) => batch.filter((r) => r.path === p);
    for (const c of chunks(by('usage'), 1000)) {
      const r = await admin(
        'POST',
        '/v1/usage',
        c.map((x) => native(x, true)),
      );
      expectAll('POST /v1/usage', r.body, c.length);
    }
    for (const m of meters) {
      for (const c of chunks(
        by('meter').filter((r) => r.meter === m),
        1000,
      )) {
        const r = await admin(
          'POST',
          `/v1/meters/${m.id}/usage`,
          c.map((x) => native(x, false)),
        );
        expectAll(`POST /v1/meters/${m.id}/usage`, r.body, c.length);
      }
    }
    for (const c of chunks(by('cloudevents'), 1000)) {
      const res = await fetch(`${api.url}/v1/usage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/cloudevents-batch+json' },
        body: JSON.stringify(c.map(event)),
      });
      expectAll('CloudEvents', await res.json(), c.length);
    }
    // meterline/client's UsageEmitter over the usage stream: records take `customer`.
    const rejected: unknown[] = [];
    const emitter = new UsageEmitter({
      baseUrl: api.url,
      token: ADMIN,
      transport: 'stream',
      flushOnExit: false,
      onRejected: (_r, e) => rejected.push(e),
    });
    for (const r of by('stream')) await emitter.emit({ ...native(r, false), meter_id: r.meter.id });
    await emitter.close();
    if (rejected.length) throw new Error(`stream rejected ${rejected.length}: ${JSON.stringify(rejected[0])}`);
    return emitter.counters.accepted;
  };
  const streamed = await send(recs);
  t.equal(streamed, recs.filter((r) => r.path === 'stream').length, 'the emitter’s records all accepted');
  await send(resent.sort(() => rand() - 0.5));
  t.comment(`every record sent (${took()})`);

  // ── what ClickHouse holds, read through the API ──
  const usage = (token: string, meterId: string, q: string) =>
    callJson(api.url, token, 'GET', `/v1/meters/${meterId}/usage?start_date=${iso(from)}&end_date=${iso(now)}&${q}`);
  for (const m of meters) {
    await waitUntil(
      async () => (await usage(ADMIN, m.id, 'window=none')).body.count === model.count(m.id),
      `ClickHouse to hold the ${model.count(m.id)} distinct records of ${m.aggregation}`,
      300_000,
      500,
    );
  }
  t.comment(`ClickHouse holds them all (${took()})`);

  t.test('group_by=customer: one group per customer, each equal to the model', async (t) => {
    for (const m of meters) {
      const r = await usage(ADMIN, m.id, 'window=none&group_by=customer');
      t.equal(r.status, 200);
      const byExternal = new Map(customers.map((c) => [c.externalId, c]));
      let wrong = 0;
      for (const g of r.body.groups) {
        const c = byExternal.get(g.dimensions.customer);
        const want = AttributedModel.figures(model.entries(m.id, c?.accountId ?? '?'), m.aggregation);
        if (!c || g.value !== want.value || g.count !== want.count) {
          if (wrong++ < 3)
            t.comment(`${m.aggregation} ${g.dimensions.customer}: ${g.value}/${g.count} vs ${JSON.stringify(want)}`);
        }
      }
      t.equal(
        r.body.groups.length,
        model.accounts(m.id).length,
        `${m.aggregation}: a group for every customer with usage`,
      );
      t.equal(wrong, 0, `${m.aggregation}: every group equals the model`);
      const total = AttributedModel.figures(
        customers.flatMap((c) => model.entries(m.id, c.accountId)),
        m.aggregation,
      );
      t.same({ value: r.body.value, count: r.body.count }, total, `${m.aggregation}: the total of every customer`);
    }
  });

  t.test('filter[customer] and the customer’s own token read exactly that customer, by day', async (t) => {
    const sample = customers.filter((_, i) => i % Math.ceil(customers.length / 12) === 0);
    for (const c of sample) {
      const own = await customerToken(api.infra, c.accountId, ['read']);
      for (const m of meters) {
        const want = AttributedModel.figures(model.entries(m.id, c.accountId), m.aggregation);
        const filtered = await usage(ADMIN, m.id, `window=day&filter[customer]=${encodeURIComponent(c.externalId)}`);
        const mine = await usage(own, m.id, 'window=day');
        t.same(
          { value: filtered.body.value, count: filtered.body.count },
          want,
          `${c.externalId} ${m.aggregation} (admin)`,
        );
        t.same(
          mine.body.data,
          filtered.body.data,
          `${c.externalId} ${m.aggregation}: its own token reads the same days`,
        );
        let days = 0;
        for (const w of mine.body.data) {
          const e = AttributedModel.figures(
            model.entries(m.id, c.accountId, Date.parse(w.start), Date.parse(w.end)),
            m.aggregation,
          );
          if (w.count !== e.count || w.value !== e.value) days++;
        }
        t.equal(days, 0, `${c.externalId} ${m.aggregation}: every day equals the model`);
      }
      const other = sample.find((x) => x !== c)!;
      const peek = await usage(own, meters[0]!.id, `window=none&filter[customer]=${other.externalId}`);
      t.equal(peek.body.count, 0, 'filtering on another customer reads nothing of it');
      const grouped = await usage(own, meters[0]!.id, 'window=none&group_by=customer');
      t.same(
        grouped.body.groups.map((g: any) => g.dimensions.customer),
        model.entries(meters[0]!.id, c.accountId).length ? [c.externalId] : [],
        'group_by=customer shows only itself',
      );
    }
  });
});

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
