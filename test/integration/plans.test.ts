import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';

/**
 * Plans and versions (issue 29, docs/plans.md) through the real api and Postgres: an operator (admin) makes plans
 * and their versions, every token reads them, a subscription made from a plan gets its version's items and names
 * the plan and version; items-only subscriptions keep working.
 */
t.test('plans: create, version, read; subscribing to a plan', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const product = async (name: string, price: number, currency = 'USD', pricing = 'flat') =>
    (await made(ADMIN, 'POST', '/v1/products', { name, price, currency, pricing })).id as string;
  const [customer, other] = await createCustomers(api.url, ADMIN, 2, 'plans');
  const customerTok = await customerToken(api.infra, customer!.accountId);
  const otherTok = await customerToken(api.infra, other!.accountId);

  const seat = await product('Seat', 10);
  const calls = await product('Calls', 0.01, 'USD', 'metered');
  const euro = await product('Euro seat', 9, 'EUR');
  const meter = (await deploymentMeter(api.url, ADMIN, { name: 'api calls', aggregation: 'sum' })).id;
  const ownMeter = (
    await made(operator.tokens.write, 'POST', '/v1/meters', { name: 'own', unit: 'u', aggregation: 'sum' })
  ).id;

  const created = await call(ADMIN, 'POST', '/v1/plans', {
    name: 'Team',
    currency: 'usd',
    interval: 'month',
    items: [
      { product_id: seat, quantity: 3 },
      { product_id: calls, meter_id: meter, minimum_amount: 5.25 },
    ],
  });
  const planId = created.body.id as string;

  await t.test('an operator makes a plan: version 1, defaults, exact minimum', async (t) => {
    t.equal(created.status, 201, JSON.stringify(created.body));
    t.match(planId, /^plan_[0-9A-Za-z]{22}$/);
    t.equal(created.headers.get('location'), `/v1/plans/${planId}`);
    t.same(
      { ...created.body, id: undefined, created_at: undefined },
      {
        id: undefined,
        name: 'Team',
        currency: 'USD',
        interval: 'month',
        interval_count: 1,
        version: 1,
        items: [
          { product_id: seat, meter_id: null, quantity: 3 },
          { product_id: calls, meter_id: meter, minimum_amount: 5.25 },
        ],
        trial_days: 0,
        created_at: undefined,
      },
    );
  });

  await t.test('only admin writes plans; every token reads them', async (t) => {
    for (const token of [operator.tokens.write, customerTok]) {
      const r = await call(token, 'POST', '/v1/plans', {
        name: 'x',
        currency: 'USD',
        interval: 'year',
        items: [{ product_id: seat }],
      });
      t.equal(r.status, 403);
      t.equal(r.body.code, 'insufficient_scope');
      const v = await call(token, 'POST', `/v1/plans/${planId}/versions`, { name: 'y' });
      t.equal(v.status, 403);
    }
    for (const token of [customerTok, otherTok, operator.tokens.read]) {
      const got = await call(token, 'GET', `/v1/plans/${planId}`);
      t.equal(got.status, 200);
      t.same(got.body, created.body, 'the same plan to every reader');
      const list = await call(token, 'GET', '/v1/plans');
      t.equal(list.status, 200);
      t.ok(list.body.data.some((p: { id: string }) => p.id === planId));
    }
  });

  await t.test('bad input: 422 naming the field, nothing written', async (t) => {
    const before = (await made(ADMIN, 'GET', '/v1/plans')).pagination.total;
    const base = { name: 'Bad', currency: 'USD', interval: 'month', items: [{ product_id: seat }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, interval: 'fortnight' }, 'interval'],
      [{ ...base, interval_count: 0 }, 'interval_count'],
      [{ ...base, interval_count: 13 }, 'interval_count'],
      [{ ...base, trial_days: -1 }, 'trial_days'],
      [{ ...base, name: '  ' }, 'name'],
      [{ ...base, items: [] }, 'items'],
      [{ ...base, items: [{ product_id: 'prod_nope' }] }, 'items[0].product_id'],
      [{ ...base, items: [{ product_id: calls }] }, 'items[0].meter_id'],
      [{ ...base, items: [{ product_id: calls, meter_id: ownMeter }] }, 'items[0].meter_id'],
      [{ ...base, items: [{ product_id: euro }] }, 'items[0].product_id'],
      [{ ...base, items: [{ product_id: seat }, { product_id: seat }] }, 'items[1]'],
    ];
    for (const [body, field] of cases) {
      const r = await call(ADMIN, 'POST', '/v1/plans', body);
      t.equal(r.status, 422, `${JSON.stringify(body)} → 422`);
      t.ok(
        r.body.errors?.some((e: { field: string }) => e.field === field),
        `names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.equal((await made(ADMIN, 'GET', '/v1/plans')).pagination.total, before, 'no plan written');
  });

  await t.test('versions: the next one has the changes; earlier ones never change', async (t) => {
    const v2 = await call(ADMIN, 'POST', `/v1/plans/${planId}/versions`, {
      items: [{ product_id: seat, quantity: 5 }],
      trial_days: 14,
    });
    t.equal(v2.status, 201, JSON.stringify(v2.body));
    t.equal(v2.body.version, 2);
    t.equal(v2.body.name, 'Team', 'unchanged fields are the latest version’s');
    t.equal(v2.body.trial_days, 14);
    t.same(v2.body.items, [{ product_id: seat, meter_id: null, quantity: 5 }]);
    const v3 = await made(ADMIN, 'POST', `/v1/plans/${planId}/versions`, { name: 'Team (yearly)', interval: 'year' });
    t.equal(v3.version, 3);
    t.same(v3.items, v2.body.items);
    t.equal((await made(customerTok, 'GET', `/v1/plans/${planId}`)).version, 3, 'latest by default');
    t.same(await made(customerTok, 'GET', `/v1/plans/${planId}?version=1`), created.body, 'version 1 as it was');
    t.equal((await made(customerTok, 'GET', `/v1/plans/${planId}?version=2`)).trial_days, 14);
    const list = await made(customerTok, 'GET', '/v1/plans');
    t.equal(list.data.find((p: { id: string }) => p.id === planId).version, 3, 'the list shows the latest');
    // Concurrent versions: each its own number.
    const many = await Promise.all(
      [1, 2, 3, 4].map((n) => made(ADMIN, 'POST', `/v1/plans/${planId}/versions`, { trial_days: n })),
    );
    t.same(many.map((v) => v.version).sort(), [4, 5, 6, 7]);
  });

  await t.test('versions: bad input 422, unknown 404', async (t) => {
    t.equal((await call(ADMIN, 'POST', `/v1/plans/${planId}/versions`, {})).status, 422);
    const cur = (await call(ADMIN, 'POST', `/v1/plans/${planId}/versions`, { items: [{ product_id: euro }] })).body;
    t.equal(cur.errors?.[0]?.field, 'items[0].product_id', 'a version keeps the plan’s currency');
    t.equal((await call(ADMIN, 'POST', `/v1/plans/${planId}/versions`, { currency: 'EUR' })).status, 422);
    t.equal((await call(ADMIN, 'GET', `/v1/plans/${planId}`)).body.version, 7, 'no version written');
    t.equal((await call(ADMIN, 'POST', '/v1/plans/plan_nope/versions', { name: 'x' })).status, 404);
    t.equal((await call(customerTok, 'GET', '/v1/plans/plan_0000000000000000000000')).status, 404);
    const missing = await call(customerTok, 'GET', `/v1/plans/${planId}?version=99`);
    t.equal(missing.status, 404);
    t.equal(missing.body.code, 'not_found');
    t.equal((await call(customerTok, 'GET', `/v1/plans/${planId}?version=0`)).status, 422);
  });

  await t.test('subscribing to a plan: its version’s items, plan_id and plan_version', async (t) => {
    const latest = await call(customerTok, 'POST', '/v1/subscriptions', { plan_id: planId });
    t.equal(latest.status, 201, JSON.stringify(latest.body));
    t.equal(latest.body.plan_id, planId);
    t.equal(latest.body.plan_version, 7);
    t.same(latest.body.items, [{ product_id: seat, meter_id: null, quantity: 5 }]);
    const v1 = await call(ADMIN, 'POST', '/v1/subscriptions', {
      plan_id: planId,
      plan_version: 1,
      customer_id: other!.id,
    });
    t.equal(v1.status, 201, JSON.stringify(v1.body));
    t.equal(v1.body.plan_version, 1);
    t.same(v1.body.items, created.body.items);
    const read = await made(otherTok, 'GET', `/v1/subscriptions/${v1.body.id}`);
    t.equal(read.plan_id, planId, 'the customer reads its plan');
    t.equal(read.plan_version, 1);
    t.equal((await call(customerTok, 'GET', `/v1/subscriptions/${v1.body.id}`)).status, 404, 'not another customer’s');

    const plain = await call(customerTok, 'POST', '/v1/subscriptions', { items: [{ product_id: seat }] });
    t.equal(plain.status, 201);
    t.equal(plain.body.plan_id, null, 'items-only: no plan');
    t.equal(plain.body.plan_version, null);

    const bad: [Record<string, unknown>, string][] = [
      [{ plan_id: planId, items: [{ product_id: seat }] }, 'plan_id'],
      [{}, 'items'],
      [{ items: [{ product_id: seat }], plan_version: 1 }, 'plan_version'],
      [{ plan_id: 'plan_nope' }, 'plan_id'],
      [{ plan_id: planId, plan_version: 99 }, 'plan_version'],
    ];
    for (const [body, field] of bad) {
      const r = await call(customerTok, 'POST', '/v1/subscriptions', body);
      t.equal(r.status, 422, `${JSON.stringify(body)} → 422`);
      t.equal(r.body.errors?.[0]?.field, field, JSON.stringify(r.body.errors));
    }

    // Items changed by hand are no longer the plan's.
    const changed = await made(customerTok, 'PATCH', `/v1/subscriptions/${latest.body.id}`, {
      items: [{ product_id: seat, quantity: 6 }],
    });
    t.equal(changed.plan_id, null);
    t.equal(changed.plan_version, null);
  });
  await t.test('a plan gives its subscription its interval and trial; the request its anchor', async (t) => {
    const yearly = (
      await made(ADMIN, 'POST', '/v1/plans', {
        name: 'Yearly',
        currency: 'USD',
        interval: 'year',
        trial_days: 14,
        items: [{ product_id: seat }],
      })
    ).id;
    const sub = await call(customerTok, 'POST', '/v1/subscriptions', { plan_id: yearly, billing_anchor: 'start' });
    t.equal(sub.status, 201, JSON.stringify(sub.body));
    t.equal(sub.body.interval, 'year');
    t.equal(sub.body.interval_count, 1);
    t.equal(sub.body.billing_anchor, 'start');
    const trialDays = (Date.parse(sub.body.trial_end) - Date.parse(sub.body.created_at)) / 86_400_000;
    t.equal(trialDays, 14, 'the plan’s 14-day trial from the start');
    // Next 1 January: within the two years a trial may run (issue 49).
    const ownTrial = new Date(Date.UTC(new Date().getUTCFullYear() + 1, 0, 1)).toISOString();
    const own = await made(customerTok, 'POST', '/v1/subscriptions', { plan_id: yearly, trial_end: ownTrial });
    t.equal(own.trial_end, ownTrial, 'a trial_end given replaces the plan’s trial');
    t.equal(own.billing_anchor, 'calendar', 'calendar by default');
    for (const field of ['interval', 'interval_count']) {
      const r = await call(customerTok, 'POST', '/v1/subscriptions', {
        plan_id: yearly,
        [field]: field === 'interval' ? 'month' : 2,
      });
      t.equal(r.status, 422, `${field} with plan_id → 422`);
      t.equal(r.body.errors?.[0]?.field, field);
    }
    const monthly = await made(customerTok, 'POST', '/v1/subscriptions', { plan_id: planId, plan_version: 1 });
    t.equal(monthly.interval, 'month', 'a monthly plan');
    t.equal(monthly.trial_end, null, 'no trial: trial_days 0');

    // A migration keeps a subscription's periods: a version with another interval is refused, nothing moved.
    await made(ADMIN, 'POST', `/v1/plans/${yearly}/versions`, { interval: 'month' });
    const refused = await call(ADMIN, 'POST', `/v1/plans/${yearly}/migrate`, {
      from_version: 1,
      to_version: 2,
      at: 'now',
      dry_run: false,
    });
    t.equal(refused.status, 422, JSON.stringify(refused.body));
    t.equal(refused.body.errors?.[0]?.field, 'to_version');
    t.equal((await made(customerTok, 'GET', `/v1/subscriptions/${sub.body.id}`)).plan_version, 1, 'not moved');
  });
  await t.test('migrating: same items on a new version, canceled and hand-changed subscriptions', async (t) => {
    const p = (
      await made(ADMIN, 'POST', '/v1/plans', {
        name: 'Basic',
        currency: 'USD',
        interval: 'month',
        items: [{ product_id: seat }],
      })
    ).id;
    await made(ADMIN, 'POST', `/v1/plans/${p}/versions`, { trial_days: 30 });
    const same = (await made(customerTok, 'POST', '/v1/subscriptions', { plan_id: p, plan_version: 1 })).id;
    const canceled = (await made(customerTok, 'POST', '/v1/subscriptions', { plan_id: p, plan_version: 1 })).id;
    await made(customerTok, 'PATCH', `/v1/subscriptions/${canceled}`, { status: 'canceled' });
    const handmade = (await made(customerTok, 'POST', '/v1/subscriptions', { plan_id: p, plan_version: 1 })).id;
    await made(customerTok, 'PATCH', `/v1/subscriptions/${handmade}`, { items: [{ product_id: seat, quantity: 2 }] });
    const eventsOf = async (id: string) =>
      (
        await api.infra.pg.query(
          "SELECT count(*)::int AS n FROM outbox_events WHERE type = 'subscription.updated' AND data->>'subscription_id' = $1",
          [id],
        )
      ).rows[0].n;
    const before = await eventsOf(same);
    const body = { from_version: 1, to_version: 2, at: 'now' };
    t.equal((await made(ADMIN, 'POST', `/v1/plans/${p}/migrate`, { ...body, dry_run: true })).subscriptions, 1);
    const r = await made(ADMIN, 'POST', `/v1/plans/${p}/migrate`, { ...body, dry_run: false });
    t.equal(r.subscriptions, 1, 'only the active subscription still on the plan');
    const moved = await made(customerTok, 'GET', `/v1/subscriptions/${same}`);
    t.equal(moved.plan_version, 2);
    t.same(moved.items, [{ product_id: seat, meter_id: null }], 'the same items');
    t.equal(await eventsOf(same), before + 1, 'one subscription.updated for the move');
    const rows = await api.infra.pg.query(
      'SELECT count(*)::int AS n FROM subscription_items WHERE subscription_id = $1',
      [same],
    );
    t.equal(rows.rows[0].n, 1, 'the unchanged item keeps its row (nothing to pro-rate)');
    t.equal((await made(customerTok, 'GET', `/v1/subscriptions/${canceled}`)).plan_version, 1, 'a canceled one stays');
    t.equal(
      (await made(customerTok, 'GET', `/v1/subscriptions/${handmade}`)).plan_id,
      null,
      'a hand-changed one is off the plan',
    );
  });
});
