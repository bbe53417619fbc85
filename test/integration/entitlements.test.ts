import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';
import { EntitlementEvaluator } from '../../services/roles/billing/entitlement-evaluator.js';
import { emitExhaustions } from '../../services/domain/entitlements/exhaustion.js';

/**
 * Entitlements (docs/entitlements.md) against real servers: a metered `block` entitlement of 1,000 — its balance
 * from the deduplicated usage (re-sent ids never move it, a correction does), a grant, the next period's reset,
 * the exhausted event once — boolean entitlements, bad input, and customers' isolation. Checks go to a second api
 * process from the one that accepted the records: every api answers from its own in-memory table.
 */
t.test('entitlements', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const api2 = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const evaluators = [new EntitlementEvaluator(api.infra, 200), new EntitlementEvaluator(api2.infra, 200)];
  for (const e of evaluators) {
    await e.start();
    t.teardown(() => e.stop());
  }
  const operator = await createTestAccount(api.infra, { operator: true });
  const admin = operator.tokens.admin;
  const [a, b, c] = await createCustomers(api.url, admin, 3, 'ent');
  const tokenA = await customerToken(api.infra, a!.accountId);
  const tokenB = await customerToken(api.infra, b!.accountId);
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const check = (token: string, q: string) => callJson(api2.url, token, 'GET', `/v1/entitlements/check?${q}`);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const meter = await deploymentMeter(api.url, admin, { name: 'calls', aggregation: 'sum' });
  await waitForIngressMeter(api.url, tokenA, meter.id);

  let seq = 0;
  /** Records of `values` for a customer, each under a new id; returns the records (to re-send). */
  const send = async (customer: string, values: number[], timestamp = new Date().toISOString()) => {
    const records = values.map((value) => ({ value, timestamp, id: `r-${++seq}`, customer }));
    const r = await call(admin, 'POST', `/v1/meters/${meter.id}/usage`, records);
    t.equal(r.status, 202, `${records.length} records accepted`);
    return records;
  };

  const ent = await made(admin, 'POST', '/v1/entitlements', {
    customer_id: a!.id,
    feature: 'gpt-4.calls',
    type: 'metered',
    meter_id: meter.id,
    limit: 1000,
    period: 'month',
    overage: 'block',
  });

  t.test('a metered entitlement is created as given', async (t) => {
    t.match(ent, {
      id: /^ent_/,
      customer_id: a!.id,
      feature: 'gpt-4.calls',
      type: 'metered',
      meter_id: meter.id,
      limit: 1000,
      period: 'month',
      overage: 'block',
    });
    t.same((await call(tokenA, 'GET', `/v1/entitlements/${ent.id}`)).body, ent, 'the customer reads its own');
  });

  t.test('999 of 1,000 with 20 % re-sent ids: access, balance 1; 1,001: none', async (t) => {
    // 111 records of 9 = 999; 22 of them (20 %) sent again with the same ids.
    const records = await send(a!.externalId, Array(111).fill(9));
    const again = await call(admin, 'POST', `/v1/meters/${meter.id}/usage`, records.slice(0, 22));
    t.equal(again.status, 202);
    const answer = async () => (await check(admin, `feature=gpt-4.calls&customer=${a!.externalId}`)).body;
    await waitUntil(async () => (await answer()).usage === 999, 'the check sees 999');
    const month = new Date();
    t.same(await answer(), {
      feature: 'gpt-4.calls',
      has_access: true,
      usage: 999,
      limit: 1000,
      balance: 1,
      period_start: new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString(),
      period_end: new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString(),
    });
    const usage = await call(
      admin,
      'GET',
      `/v1/meters/${meter.id}/usage?window=none&filter[customer]=${a!.externalId}`,
    );
    t.equal(usage.body.value, 999, 'the usage query agrees');
    t.same(
      (await check(tokenA, 'feature=gpt-4.calls')).body,
      await answer(),
      'the customer’s token, customer left out',
    );
    t.same((await check(tokenA, `feature=gpt-4.calls&customer=${a!.id}`)).body, await answer(), 'or naming itself');

    await send(a!.externalId, [2]);
    await waitUntil(async () => (await answer()).usage === 1001, 'the check sees 1,001');
    t.match(await answer(), { has_access: false, usage: 1001, limit: 1000, balance: -1 });
    // 30 more re-sent ids in one request with one new record of 1: once that one counts, so would they.
    const one = { ...records[0]!, id: `r-${++seq}`, value: 1 };
    t.equal((await call(admin, 'POST', `/v1/meters/${meter.id}/usage`, [...records.slice(50, 80), one])).status, 202);
    await waitUntil(async () => (await answer()).usage !== 1001, 'the new record');
    t.match(await answer(), { usage: 1002, balance: -2 }, 're-sent ids never move the balance');
  });

  t.test('entitlement.exhausted: once for the period, whatever the evaluators', async (t) => {
    const events = async () =>
      (await call(tokenA, 'GET', '/v1/events?type=entitlement.exhausted')).body.data as { data: any }[];
    await waitUntil(async () => (await events()).length > 0, 'the exhausted event');
    t.same(
      await Promise.all(
        [0, 1, 2].map(() => emitExhaustions(api.infra.pg, api.infra.clickhouse, config.CLICKHOUSE_DATABASE)),
      ),
      [0, 0, 0],
      'evaluator passes after it append nothing',
    );
    const list = await events();
    t.equal(list.length, 1, 'one event');
    t.match(list[0]!.data, {
      entitlement_id: ent.id,
      customer_id: a!.id,
      feature: 'gpt-4.calls',
      limit: 1000,
    });
    t.ok(list[0]!.data.usage >= 1000, 'usage at or past the limit');
  });

  t.test('a grant of 500 tops up the period: access again', async (t) => {
    const grant = await made(admin, 'POST', `/v1/entitlements/${ent.id}/grants`, { amount: 500 });
    t.match(grant, { id: /^entg_/, entitlement_id: ent.id, amount: 500, expires_at: null });
    await waitUntil(async () => (await check(tokenA, 'feature=gpt-4.calls')).body.limit === 1500, 'the grant counts');
    t.match((await check(tokenA, 'feature=gpt-4.calls')).body, {
      has_access: true,
      usage: 1002,
      limit: 1500,
      balance: 498,
    });
  });

  t.test('PATCH changes the limit and overage; allow gives access past it', async (t) => {
    t.match((await call(admin, 'PATCH', `/v1/entitlements/${ent.id}`, { limit: 100, overage: 'allow' })).body, {
      limit: 100,
      overage: 'allow',
    });
    await waitUntil(async () => (await check(tokenA, 'feature=gpt-4.calls')).body.limit === 600, 'the new limit');
    t.match((await check(tokenA, 'feature=gpt-4.calls')).body, { has_access: true, balance: -402 });
    await made(admin, 'PATCH', `/v1/entitlements/${ent.id}`, { limit: 1000, overage: 'block' });
  });

  t.test('an account’s own meter; a correction changes the balance', async (t) => {
    const own = await made(tokenB, 'POST', '/v1/meters', { name: 'exports', unit: 'u', aggregation: 'count' });
    await waitForIngressMeter(api.url, tokenB, own.id);
    const e = await made(admin, 'POST', '/v1/entitlements', {
      customer_id: b!.id,
      feature: 'exports',
      type: 'metered',
      meter_id: own.id,
      limit: 3,
      period: 'billing_period',
    });
    t.match(e, { period: 'billing_period', overage: 'block' }, 'defaults');
    const ts = new Date().toISOString();
    const r = await call(tokenB, 'POST', `/v1/meters/${own.id}/usage`, [
      { value: 1, timestamp: ts, id: 'x-1' },
      { value: 1, timestamp: ts, id: 'x-2' },
      { value: 1, timestamp: ts, id: 'x-3' },
    ]);
    t.equal(r.status, 202);
    await waitUntil(async () => (await check(tokenB, 'feature=exports')).body.usage === 3, 'three exports');
    t.match((await check(tokenB, 'feature=exports')).body, { has_access: false, balance: 0 });
    t.equal((await call(tokenB, 'POST', `/v1/meters/${own.id}/usage/corrections`, { cancel: ['x-2'] })).status, 201);
    await waitUntil(async () => (await check(tokenB, 'feature=exports')).body.usage === 2, 'the correction counts');
    t.match((await check(tokenB, 'feature=exports')).body, { has_access: true, balance: 1 });
    // A late record (an hour old, still in this period) counts too.
    const now = new Date();
    const late = new Date(Math.max(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), now.getTime() - 3_600_000));
    const l = await call(tokenB, 'POST', `/v1/meters/${own.id}/usage`, {
      value: 1,
      timestamp: late.toISOString(),
      id: 'x-4',
    });
    t.equal(l.status, 202);
    await waitUntil(async () => (await check(tokenB, 'feature=exports')).body.usage === 3, 'the late record counts');
    t.match((await check(tokenB, 'feature=exports')).body, { has_access: false, balance: 0 });
  });

  t.test('a metered entitlement of one dimension value counts only that value’s usage (issue 46)', async (t) => {
    const tokens = await made(tokenB, 'POST', '/v1/meters', {
      name: 'tokens',
      unit: 'tokens',
      aggregation: 'sum',
      dimensions: ['model'],
    });
    await waitForIngressMeter(api.url, tokenB, tokens.id);
    const bad = await call(admin, 'POST', '/v1/entitlements', {
      customer_id: b!.id,
      feature: 'tokens.large',
      type: 'metered',
      meter_id: tokens.id,
      limit: 100,
      dimension: { key: 'region', value: 'eu' },
    });
    t.equal(bad.status, 422, 'a dimension the meter does not declare');
    t.ok(
      bad.body.errors?.some((e: { field: string }) => e.field === 'dimension.key'),
      'names dimension.key',
    );
    const e = await made(admin, 'POST', '/v1/entitlements', {
      customer_id: b!.id,
      feature: 'tokens.large',
      type: 'metered',
      meter_id: tokens.id,
      limit: 100,
      period: 'month',
      dimension: { key: 'model', value: 'large' },
    });
    t.same(e.dimension, { key: 'model', value: 'large' }, 'shown on the entitlement');
    const ts = new Date().toISOString();
    const r = await call(tokenB, 'POST', `/v1/meters/${tokens.id}/usage`, [
      { value: 60, timestamp: ts, id: 'd-1', dimensions: { model: 'large' } },
      { value: 500, timestamp: ts, id: 'd-2', dimensions: { model: 'small' } },
      { value: 30, timestamp: ts, id: 'd-3' },
    ]);
    t.equal(r.status, 202);
    await waitUntil(async () => (await check(tokenB, 'feature=tokens.large')).body.usage === 60, 'large only: 60');
    t.match((await check(tokenB, 'feature=tokens.large')).body, { has_access: true, balance: 40 });
    await call(tokenB, 'POST', `/v1/meters/${tokens.id}/usage`, [
      { value: 45, timestamp: ts, id: 'd-4', dimensions: { model: 'large' } },
    ]);
    await waitUntil(async () => (await check(tokenB, 'feature=tokens.large')).body.usage === 105, 'large: 105');
    t.match((await check(tokenB, 'feature=tokens.large')).body, { has_access: false, balance: -5 });
  });

  t.test('the next period starts again at zero; a grant does not carry into it', async (t) => {
    const start = new Date(Math.floor(Date.now() / 1000) * 1000);
    const clock = await made(admin, 'POST', '/v1/test_clocks', { frozen_time: start.toISOString() });
    await made(admin, 'POST', `/v1/test_clocks/${clock.id}/customers`, { customer_id: c!.id });
    const e = await made(admin, 'POST', '/v1/entitlements', {
      customer_id: c!.id,
      feature: 'gpt-4.calls',
      type: 'metered',
      meter_id: meter.id,
      limit: 1000,
      period: 'day',
    });
    await send(c!.externalId, [600, 401], start.toISOString());
    await made(admin, 'POST', `/v1/entitlements/${e.id}/grants`, { amount: 5 });
    const answer = async () => (await check(admin, `feature=gpt-4.calls&customer=${c!.id}`)).body;
    await waitUntil(async () => (await answer()).usage === 1001 && (await answer()).limit === 1005, 'the day’s usage');
    t.match(await answer(), { has_access: true, balance: 4 });
    const dayStart = Math.floor(start.getTime() / 86_400_000) * 86_400_000;
    const next = new Date(dayStart + 86_400_000 + 3_600_000);
    await made(admin, 'POST', `/v1/test_clocks/${clock.id}/advance`, { frozen_time: next.toISOString() });
    await waitUntil(async () => (await answer()).usage === 0, 'the next day');
    t.same(await answer(), {
      feature: 'gpt-4.calls',
      has_access: true,
      usage: 0,
      limit: 1000,
      balance: 1000,
      period_start: new Date(dayStart + 86_400_000).toISOString(),
      period_end: new Date(dayStart + 2 * 86_400_000).toISOString(),
    });
  });

  t.test('boolean entitlements: access while they exist', async (t) => {
    const sso = await made(admin, 'POST', '/v1/entitlements', { customer_id: a!.id, feature: 'sso', type: 'boolean' });
    t.match(sso, { type: 'boolean', meter_id: null, limit: null, period: null, overage: null });
    await waitUntil(async () => (await check(tokenA, 'feature=sso')).body.has_access === true, 'sso');
    t.same((await check(tokenA, 'feature=sso')).body, {
      feature: 'sso',
      has_access: true,
      usage: null,
      limit: null,
      balance: null,
      period_start: null,
      period_end: null,
    });
    t.equal((await call(admin, 'DELETE', `/v1/entitlements/${sso.id}`)).status, 204);
    await waitUntil(async () => (await check(tokenA, 'feature=sso')).body.has_access === false, 'deleted');
    t.same((await check(tokenA, 'feature=sso')).body, {
      feature: 'sso',
      has_access: false,
      reason: 'no_entitlement',
      usage: null,
      limit: null,
      balance: null,
      period_start: null,
      period_end: null,
    });
    t.equal((await call(admin, 'GET', `/v1/entitlements/${sso.id}`)).status, 404);
  });

  t.test('bad input: a precise problem, nothing written', async (t) => {
    const bad: [string, string, unknown, number, string, string?][] = [
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'Bad Key!', type: 'boolean' },
        422,
        'validation_failed',
        'feature',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'x'.repeat(65), type: 'boolean' },
        422,
        'validation_failed',
        'feature',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', limit: 1 },
        422,
        'validation_failed',
        'meter_id',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', meter_id: meter.id },
        422,
        'validation_failed',
        'limit',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', meter_id: meter.id, limit: -1 },
        422,
        'validation_failed',
        'limit',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', meter_id: meter.id, limit: 1.0000000001 },
        422,
        'validation_failed',
        'limit',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', meter_id: meter.id, limit: 1, period: 'week' },
        422,
        'validation_failed',
        'period',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'b', type: 'boolean', limit: 5 },
        422,
        'validation_failed',
        'limit',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: 'cus_nobody', feature: 'b', type: 'boolean' },
        422,
        'validation_failed',
        'customer_id',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'm', type: 'metered', meter_id: 'mtr_nope', limit: 1 },
        422,
        'validation_failed',
        'meter_id',
      ],
      [
        'POST',
        '/v1/entitlements',
        { customer_id: a!.id, feature: 'gpt-4.calls', type: 'boolean' },
        409,
        'conflict',
        'feature',
      ],
      ['PATCH', `/v1/entitlements/${ent.id}`, {}, 422, 'validation_failed'],
      ['PATCH', `/v1/entitlements/${ent.id}`, { feature: 'renamed' }, 422, 'validation_failed', 'feature'],
      ['POST', `/v1/entitlements/${ent.id}/grants`, { amount: 0 }, 422, 'validation_failed', 'amount'],
      [
        'POST',
        `/v1/entitlements/${ent.id}/grants`,
        { amount: 5, expires_at: '2001-01-01T00:00:00Z' },
        422,
        'validation_failed',
        'expires_at',
      ],
      ['POST', '/v1/entitlements/ent_unknown/grants', { amount: 5 }, 404, 'not_found'],
      ['GET', '/v1/entitlements/check', undefined, 422, 'validation_failed', 'feature'],
      ['GET', '/v1/entitlements/check?feature=UPPER', undefined, 422, 'validation_failed', 'feature'],
    ];
    for (const [method, path, body, status, code, field] of bad) {
      const r = await call(admin, method, path, body);
      t.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)} → ${status}`);
      t.equal(r.body.code, code);
      if (field)
        t.ok(JSON.stringify(r.body.errors ?? r.body).includes(field), `names ${field}: ${JSON.stringify(r.body)}`);
    }
    // A meter of another customer is not this customer's to be entitled by.
    const bOwn = await made(tokenB, 'POST', '/v1/meters', { name: 'b-only', unit: 'u', aggregation: 'sum' });
    const r = await call(admin, 'POST', '/v1/entitlements', {
      customer_id: a!.id,
      feature: 'x',
      type: 'metered',
      meter_id: bOwn.id,
      limit: 1,
    });
    t.equal(r.status, 422, 'another customer’s meter');
    const sso = await made(admin, 'POST', '/v1/entitlements', { customer_id: a!.id, feature: 'flag', type: 'boolean' });
    const g = await call(admin, 'POST', `/v1/entitlements/${sso.id}/grants`, { amount: 1 });
    t.equal(g.status, 409, 'no grant on a boolean entitlement');
    t.equal(g.body.code, 'entitlement_not_metered');
    const listed = await call(admin, 'GET', `/v1/entitlements?customer_id=${a!.id}&per_page=100`);
    t.same(listed.body.data.map((e: any) => e.feature).sort(), ['flag', 'gpt-4.calls'], 'nothing else was written');
  });

  t.test('isolation: a customer sees and checks only its own', async (t) => {
    const ofA = await call(tokenA, 'GET', '/v1/entitlements?per_page=100');
    t.ok(ofA.body.data.length > 0 && ofA.body.data.every((e: any) => e.customer_id === a!.id), 'A lists its own only');
    const bEnt = (await call(tokenB, 'GET', '/v1/entitlements')).body.data[0];
    t.equal(
      (await call(tokenA, 'GET', `/v1/entitlements/${bEnt.id}`)).status,
      404,
      'B’s entitlement is not found for A',
    );
    t.equal((await call(tokenA, 'GET', `/v1/entitlements?customer_id=${b!.id}`)).status, 403);
    for (const name of [b!.externalId, b!.id, 'nobody-at-all']) {
      const r = await check(tokenA, `feature=exports&customer=${name}`);
      t.equal(r.status, 403, `A checking ${name}: 403`);
      t.notOk(JSON.stringify(r.body).includes(b!.accountId), 'naming nothing of B');
    }
    for (const [method, path, body] of [
      ['POST', '/v1/entitlements', { customer_id: a!.id, feature: 'self-made', type: 'boolean' }],
      ['PATCH', `/v1/entitlements/${ent.id}`, { limit: 1e9 }],
      ['DELETE', `/v1/entitlements/${ent.id}`],
      ['POST', `/v1/entitlements/${ent.id}/grants`, { amount: 1e9 }],
    ] as const) {
      t.equal((await call(tokenA, method, path, body)).status, 403, `A: ${method} ${path} → 403`);
    }
    t.equal((await call(admin, 'GET', `/v1/entitlements/${ent.id}`)).body.limit, 1000, 'nothing of it changed');
    t.match(
      (await check(admin, `feature=exports&customer=${b!.externalId}`)).body,
      { feature: 'exports', usage: 3, limit: 3 },
      'the operator checks any customer',
    );
    t.match((await check(admin, 'feature=exports&customer=nobody-at-all')).body, {
      has_access: false,
      reason: 'no_entitlement',
    });
  });
});
