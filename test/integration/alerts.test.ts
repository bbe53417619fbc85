import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { startRoleProcess } from '../fixtures/role-process.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';
import { checkRequest, startDispatcher } from './webhook-delivery-helpers.js';
import { evaluateAlerts } from '../../services/domain/alerts/evaluate.js';

/**
 * Usage and spend alerts (docs/alerts.md), against real servers: the api, the consumer, a dispatcher delivering
 * to a real local receiver, and TWO billing processes evaluating alerts at once (each later killed with SIGKILL, a
 * third started). Each threshold fires once per
 * customer and billing period, with the value that reached it — usage counted like every read (re-sent ids once),
 * late records and corrections included — and spend priced exactly as the upcoming invoice (tiers, credit).
 */
t.test('alerts: each threshold once per customer and period, via webhooks and GET /v1/events', async (t) => {
  const config = await isolatedConfig(t, { BILLING_INTERVAL_SECONDS: '3600' });
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  await startDispatcher(t, config);
  const root = t; // role processes live as long as the whole test, not one subtest
  const evaluators = [await startRoleProcess(t, 'billing', config), await startRoleProcess(t, 'billing', config)];
  const receiver = await startReceiver(t);
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const [a, b, c, d] = await createCustomers(api.url, ADMIN, 4, 'alerted');
  const aToken = await customerToken(api.infra, a!.accountId);
  const bToken = await customerToken(api.infra, b!.accountId);
  const secret = 'alerts-hook-secret-0123456789';
  await made(ADMIN, 'POST', '/v1/webhooks', {
    url: receiver.url('/all'),
    events: ['alert.triggered'],
    secret,
    scope: 'deployment',
  });
  await made(aToken, 'POST', '/v1/webhooks', { url: receiver.url('/a'), events: ['alert.triggered'], secret });
  const meter = await deploymentMeter(api.url, ADMIN, { name: 'calls', aggregation: 'sum' });
  await waitForIngressMeter(api.url, ADMIN, meter.id);

  const now = new Date();
  const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  // Recent records, and "late" ones: timestamped at the start of the period, sent after the recent ones.
  const recent = Math.max(now.getTime() - 60_000, periodStart.getTime() + 10_000);
  const late = periodStart.getTime() + 1_000;
  // A's own meter (an account meter: corrections are per account), and its records sent with A's own token.
  const aMeter = await made(aToken, 'POST', '/v1/meters', { name: 'a-calls', unit: 'u', aggregation: 'sum' });
  await waitForIngressMeter(api.url, aToken, aMeter.id);
  const send = async (records: { id: string; value: number; ts: number; customer?: string }[]) => {
    const own = records[0]!.customer === undefined;
    const r = await call(
      own ? aToken : ADMIN,
      'POST',
      `/v1/meters/${own ? aMeter.id : meter.id}/usage`,
      records.map((x) => ({ id: x.id, value: x.value, timestamp: new Date(x.ts).toISOString(), customer: x.customer })),
    );
    t.equal(r.body.accepted, records.length, JSON.stringify(r.body).slice(0, 300));
  };
  /** `n` records of value 1 and 20 % more re-sending some of them (same id, same record): n count. */
  const withResent = (prefix: string, n: number, ts: number, customer?: string) => {
    const fresh = Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, value: 1, ts: ts + i, customer }));
    return [...fresh, ...fresh.filter((_, i) => i % 5 === 0)];
  };

  const alertEvents = () => {
    const byId = new Map<string, { id: string; type: string; data: Record<string, any> }>();
    for (const r of receiver.at('/all')) {
      const p = JSON.parse(r.body.toString());
      if (p.type === 'alert.triggered') byId.set(p.id, p);
    }
    return [...byId.values()];
  };
  const fired = (alertId: string, customerId: string) =>
    alertEvents()
      .filter((e) => e.data.alert_id === alertId && e.data.customer_id === customerId)
      .map((e) => [e.data.threshold, e.data.value])
      .sort((x, y) => x[0] - y[0]);

  await t.test('bad input is a precise problem, nothing stored', async (t) => {
    const bad: [unknown, number, string, string?][] = [
      [{ meter_id: meter.id, thresholds: [] }, 422, 'thresholds'],
      [{ meter_id: meter.id, thresholds: [0] }, 422, 'thresholds'],
      [{ meter_id: meter.id, thresholds: [-5] }, 422, 'thresholds'],
      [{ meter_id: meter.id, thresholds: ['100'] }, 422, 'thresholds'],
      [{ meter_id: meter.id, thresholds: Array.from({ length: 21 }, (_, i) => i + 1) }, 422, 'thresholds'],
      [{ meter_id: meter.id, thresholds: [0.0000000001] }, 422, 'thresholds[0]'],
      [{ thresholds: [1] }, 422, 'meter_id'],
      [{ meter_id: 'mtr_doesnotexist0000000000', thresholds: [1] }, 422, 'meter_id'],
      [{ metric: 'amount', currency: 'USD', thresholds: [1.005], customer_id: a!.id }, 422, 'thresholds[0]'],
      [{ metric: 'amount', currency: 'XYZ', thresholds: [1], customer_id: a!.id }, 422, 'currency'],
      [{ metric: 'amount', thresholds: [1], customer_id: a!.id }, 422, 'currency'],
      [{ metric: 'amount', currency: 'USD', thresholds: [1] }, 422, 'customer_id'],
      [{ metric: 'amount', currency: 'USD', meter_id: meter.id, thresholds: [1], customer_id: a!.id }, 422, 'meter_id'],
      [{ customer_id: 'cus_nobody00000000000000000', meter_id: meter.id, thresholds: [1] }, 422, 'customer_id'],
      [{ meter_id: meter.id, thresholds: [1], colour: 'red' }, 422, 'colour'],
    ];
    for (const [body, status, field] of bad) {
      const r = await call(ADMIN, 'POST', '/v1/alerts', body);
      t.equal(r.status, status, JSON.stringify(body));
      t.ok(
        (r.body.errors ?? []).some((e: { field: string }) => e.field.startsWith(field)),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.equal((await call(ADMIN, 'GET', '/v1/alerts')).body.pagination.total, 0, 'nothing stored');
    const jpy = await call(ADMIN, 'POST', '/v1/alerts', {
      customer_id: d!.id,
      metric: 'amount',
      currency: 'jpy',
      thresholds: [1.5],
    });
    t.equal(jpy.status, 422, 'JPY has no minor unit');
    const kwd = await made(ADMIN, 'POST', '/v1/alerts', {
      customer_id: d!.id,
      metric: 'amount',
      currency: 'kwd',
      thresholds: [1.005],
    });
    t.same([kwd.currency, kwd.thresholds], ['KWD', [1.005]], 'KWD has three decimals; currency upper case');
    t.equal((await call(ADMIN, 'DELETE', `/v1/alerts/${kwd.id}`)).status, 204);
  });

  // Customer A's meter: 100, 500, 1,000 (given unsorted, repeated); every customer of `meter`: 50.
  const perA = await made(ADMIN, 'POST', '/v1/alerts', {
    customer_id: a!.id,
    meter_id: aMeter.id,
    thresholds: [1000, 100, 500, 100],
  });
  t.same(perA.thresholds, [100, 500, 1000], 'thresholds sorted, repeats dropped');
  t.equal(perA.customer_id, a!.id);
  t.match(perA.id, /^alrt_/);
  const wide = await made(ADMIN, 'POST', '/v1/alerts', { meter_id: meter.id, thresholds: [50] });
  t.equal(wide.customer_id, null, 'an admin alert without customer_id on a deployment meter: every customer');

  await t.test('100: re-sent ids count once', async (t) => {
    // 100 distinct records + 20 re-sent: usage 100, not 120.
    await send(withResent('a1', 100, recent));
    await waitUntil(() => fired(perA.id, a!.id).length >= 1, 'the 100 alert');
    t.same(fired(perA.id, a!.id), [[100, 100]], 'fired at 100 with the value 100');
  });

  await t.test('500: crossed by late records', async (t) => {
    evaluators[0]!.child.kill('SIGKILL'); // one evaluator dies: the other carries on
    await send(withResent('a2', 400, late));
    await waitUntil(() => fired(perA.id, a!.id).length >= 2, 'the 500 alert');
    t.same(fired(perA.id, a!.id), [
      [100, 100],
      [500, 500],
    ]);
  });

  await t.test('1,000: crossed by a correction', async (t) => {
    // The customer replaces its record a1-0 (value 1) with one of value 501: 500 − 1 + 501 = 1,000.
    const r = await call(aToken, 'POST', `/v1/meters/${aMeter.id}/usage/corrections`, {
      replace: {
        start: new Date(recent).toISOString(),
        end: new Date(recent + 1).toISOString(),
        records: [{ id: 'a1-0-fixed', value: 501, timestamp: new Date(recent).toISOString() }],
      },
    });
    t.equal(r.status, 201, JSON.stringify(r.body));
    await waitUntil(() => fired(perA.id, a!.id).length >= 3, 'the 1,000 alert');
    t.same(fired(perA.id, a!.id), [
      [100, 100],
      [500, 500],
      [1000, 1000],
    ]);
  });

  await t.test('deployment-wide: once per customer that reaches it', async (t) => {
    // The other one dies too, and a new process starts from nothing: it re-emits nothing that already fired.
    evaluators.push(await startRoleProcess(root, 'billing', config));
    evaluators[1]!.child.kill('SIGKILL');
    await send(withResent('aw', 60, recent, a!.externalId));
    await send(withResent('b', 70, recent, b!.externalId));
    await send(withResent('c', 10, recent, c!.externalId));
    await waitUntil(() => fired(wide.id, b!.id).length >= 1, 'the deployment-wide alert for B');
    await waitUntil(() => fired(wide.id, a!.id).length >= 1, 'the deployment-wide alert for A');
    t.same(fired(wide.id, b!.id), [[50, 70]]);
    t.same(fired(wide.id, a!.id), [[50, 60]], 'A’s own meter is not the deployment meter');
  });

  await t.test('spend: the upcoming invoice’s amount, tiers and credit included', async (t) => {
    const tiered = await made(ADMIN, 'POST', '/v1/products', {
      name: 'Calls',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 100, unit_price: 1 },
        { up_to: null, unit_price: 0.5 },
      ],
    });
    const sub = await made(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: d!.id,
      items: [{ product_id: tiered.id, meter_id: meter.id }],
    });
    await made(ADMIN, 'POST', '/v1/billing/credits', {
      customer_id: d!.id,
      amount: 20,
      currency: 'USD',
      description: 'Welcome',
    });
    const spend = await made(ADMIN, 'POST', '/v1/alerts', {
      customer_id: d!.id,
      metric: 'amount',
      currency: 'usd',
      thresholds: [50, 100],
    });
    t.same([spend.metric, spend.currency, spend.meter_id], ['amount', 'USD', null]);
    // 80 calls: 80 × 1 − 20 credit = 60 → 50 fires.
    await send(withResent('d1', 80, recent, d!.externalId));
    await waitUntil(() => fired(spend.id, d!.id).length >= 1, 'the 50 spend alert');
    t.same(fired(spend.id, d!.id), [[50, 60]]);
    // 70 more: 100 × 1 + 50 × 0.5 − 20 = 105 → 100 fires, with what GET …/upcoming shows.
    await send(withResent('d2', 70, recent, d!.externalId));
    await waitUntil(() => fired(spend.id, d!.id).length >= 2, 'the 100 spend alert');
    t.same(fired(spend.id, d!.id), [
      [50, 60],
      [100, 105],
    ]);
    const dToken = await customerToken(api.infra, d!.accountId);
    const upcoming = await call(dToken, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.equal(upcoming.body.amount, 105, 'the same amount as the upcoming invoice');
    // A second subscription (a flat 30): the customer's spend is both upcoming invoices with the 20 of credit
    // spent once across them, as the period's close spends it — 125 + 30 − 20 = 135, not 105 + 10.
    const flat = await made(ADMIN, 'POST', '/v1/products', {
      name: 'Seat',
      price: 30,
      currency: 'USD',
      pricing: 'flat',
    });
    await made(ADMIN, 'POST', '/v1/subscriptions', { customer_id: d!.id, items: [{ product_id: flat.id }] });
    const both = await made(ADMIN, 'POST', '/v1/alerts', {
      customer_id: d!.id,
      metric: 'amount',
      currency: 'USD',
      thresholds: [130],
    });
    await waitUntil(() => fired(both.id, d!.id).length >= 1, 'the 130 spend alert');
    t.same(fired(both.id, d!.id), [[130, 135]], 'credit counted once across two subscriptions');
  });

  await t.test('exactly once, through two killed evaluators and a restarted one', async (t) => {
    // A sentinel alert made now fires on a later pass: every pass before it saw the same usage.
    for (const i of [1, 2]) {
      const sentinel = await made(ADMIN, 'POST', '/v1/alerts', {
        customer_id: c!.id,
        meter_id: meter.id,
        thresholds: [i],
      });
      await waitUntil(() => fired(sentinel.id, c!.id).length >= 1, `sentinel ${i}`);
    }
    // Passes re-run at once (as after a crash) beside the two processes: everything reached has fired, nothing again.
    const deps = { ...api.infra, database: config.CLICKHOUSE_DATABASE, graceMs: 3_600_000 };
    const again = await Promise.all([1, 2, 3, 4].map(() => evaluateAlerts(deps)));
    t.same(again.flat(), [], 'four more passes fire nothing');
    const keys = alertEvents().map((e) => `${e.data.alert_id} ${e.data.customer_id} ${e.data.threshold}`);
    t.equal(keys.length, new Set(keys).size, 'no (alert, customer, threshold) twice');
    t.same(fired(wide.id, c!.id), [], 'C never reached 50');
    const triggers = await api.infra.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_triggers');
    const outbox = await api.infra.pg.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM outbox_events WHERE type = 'alert.triggered'",
    );
    t.equal(outbox.rows[0]!.n, triggers.rows[0]!.n, 'one outbox event per trigger row');
    t.equal(outbox.rows[0]!.n, keys.length, 'every event delivered');
    const problems = receiver
      .at('/all')
      .map((r) => checkRequest(r, secret))
      .flatMap((r) => r.problems);
    t.same(problems, [], 'signed like every delivery');
    const one = alertEvents().find((e) => e.data.alert_id === perA.id && e.data.threshold === 500)!;
    t.same(
      one.data,
      {
        alert_id: perA.id,
        customer_id: a!.id,
        external_id: a!.externalId,
        metric: 'usage',
        meter_id: aMeter.id,
        currency: null,
        threshold: 500,
        value: 500,
        period_start: periodStart.toISOString(),
      },
      'the event’s data',
    );
  });

  await t.test('the customer’s own webhook and GET /v1/events: its own alerts only', async (t) => {
    await waitUntil(() => receiver.at('/a').length >= 4, 'A’s deliveries');
    const own = new Set(receiver.at('/a').map((r) => JSON.parse(r.body.toString()).data.customer_id));
    t.same([...own], [a!.id]);
    const events = (await call(aToken, 'GET', '/v1/events?type=alert.triggered&per_page=100')).body.data;
    t.same(
      events.map((e: any) => [e.data.alert_id, e.data.threshold]).sort(),
      [
        [perA.id, 100],
        [perA.id, 1000],
        [perA.id, 500],
        [wide.id, 50],
      ].sort(),
    );
    const bEvents = (await call(bToken, 'GET', '/v1/events?type=alert.triggered')).body.data;
    t.same(
      bEvents.map((e: any) => e.data.customer_id),
      [b!.id],
    );
  });

  await t.test('isolation: a customer reads, creates and deletes its own alerts only', async (t) => {
    const listed = (await call(aToken, 'GET', '/v1/alerts')).body.data.map((x: { id: string }) => x.id);
    t.same(listed, [perA.id], 'A sees the alert on itself, not the deployment-wide one nor others’');
    t.equal((await call(bToken, 'GET', `/v1/alerts/${perA.id}`)).status, 404);
    t.equal((await call(bToken, 'DELETE', `/v1/alerts/${perA.id}`)).status, 404);
    t.equal((await call(aToken, 'GET', `/v1/alerts/${wide.id}`)).status, 404, 'the operator’s deployment-wide alert');
    const other = await call(bToken, 'POST', '/v1/alerts', { customer_id: a!.id, meter_id: meter.id, thresholds: [1] });
    t.equal(other.status, 403, 'B cannot set an alert on A');
    t.equal((await call(bToken, 'GET', `/v1/alerts?customer_id=${a!.id}`)).status, 403);
    const mine = await call(bToken, 'POST', '/v1/alerts', { meter_id: meter.id, thresholds: [5000] });
    t.equal(mine.status, 201);
    t.equal(mine.body.customer_id, b!.id, 'a customer’s alert without customer_id is on itself');
    t.same(
      (await call(ADMIN, 'GET', `/v1/alerts?customer_id=${b!.id}`)).body.data.map((x: { id: string }) => x.id),
      [mine.body.id],
      'the operator lists one customer’s alerts',
    );
    t.equal((await call(bToken, 'DELETE', `/v1/alerts/${mine.body.id}`)).status, 204);
    t.equal((await call(bToken, 'GET', `/v1/alerts/${mine.body.id}`)).status, 404);
  });
});
