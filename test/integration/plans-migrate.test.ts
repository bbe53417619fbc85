import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { startApiProcess } from '../fixtures/api-process.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken } from '../fixtures/operator.js';

/**
 * Moving subscribers (issue 29 item 5, docs/plans.md): 10,000 subscriptions of one plan version move to the next
 * one through POST /v1/plans/{id}/migrate. The dry run changes nothing and previews the upcoming invoices; the
 * applying request is killed (kill -9 of its api process) mid-way, then run twice at once: every subscription moved
 * exactly once, with one subscription.updated each, and the preview equals the upcoming invoices. The customers
 * live on a test clock, so the preview and the move happen at the same instant (proration is to the second).
 * Then `at: period_end`: nothing changes until the period's end, when the billing run moves the subscription.
 */
const N = 10_000;
const CUSTOMERS = 20;
const CLOCK_TIME = '2026-11-10T00:00:00.000Z';
// 10,000 moves, each its own items change and event: minutes on a shared 2-core machine.
t.setTimeout(15 * 60_000);

t.test('plan migration: dry run, kill -9, two runs, period end', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const operator = await createTestAccount(api.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const call = (url: string, method: string, path: string, body?: unknown, token = ADMIN) =>
    callJson(url, token, method, path, body);
  const made = async (method: string, path: string, body?: unknown) => {
    const r = await call(api.url, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const seat = (await made('POST', '/v1/products', { name: 'Seat', price: 10, currency: 'USD' })).id;
  const support = (await made('POST', '/v1/products', { name: 'Support', price: 5, currency: 'USD' })).id;
  const plan = (
    await made('POST', '/v1/plans', { name: 'Team', currency: 'USD', interval: 'month', items: [{ product_id: seat }] })
  ).id;
  await made('POST', `/v1/plans/${plan}/versions`, {
    items: [{ product_id: seat, quantity: 2 }, { product_id: support }],
  });
  const clock = (await made('POST', '/v1/test_clocks', { frozen_time: CLOCK_TIME })).id;
  const customers = await createCustomers(api.url, ADMIN, CUSTOMERS, 'migrate');
  for (const c of customers) await made('POST', `/v1/test_clocks/${clock}/customers`, { customer_id: c.id });

  // 10,000 subscriptions on version 1 since 1 November, written as the store writes them (straight SQL: fast).
  await pg.query(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at, updated_at, billing_period_start, plan_id, plan_version)
     SELECT 'sub_mig' || lpad(i::text, 19, '0'), ($1::text[])[1 + i % $2], 'active', 'USD', '2026-11-01', '2026-11-01', '2026-11-01', $3, 1
       FROM generate_series(1, $4) AS i`,
    [customers.map((c) => c.accountId), CUSTOMERS, plan, N],
  );
  await pg.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id, quantity)
     SELECT id, 0, $2, 1 FROM subscriptions WHERE plan_id = $1`,
    [plan, seat],
  );
  // A subscription of the same customer to the same products, not on the plan: never moved.
  const bystander = (
    await made('POST', '/v1/subscriptions', { customer_id: customers[0]!.id, items: [{ product_id: seat }] })
  ).id;
  const onVersion = async (v: number) =>
    (await pg.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1 AND plan_version = $2', [plan, v]))
      .rows[0].n as number;
  const events = async () =>
    (
      await pg.query(
        `SELECT count(*)::int AS n, count(DISTINCT data->>'subscription_id')::int AS subs FROM outbox_events
          WHERE type = 'subscription.updated' AND data->>'subscription_id' LIKE 'sub_mig%'`,
      )
    ).rows[0] as { n: number; subs: number };
  const migrate = (url: string, dryRun: boolean, query = '') =>
    call(url, 'POST', `/v1/plans/${plan}/migrate${query}`, {
      from_version: 1,
      to_version: 2,
      at: 'now',
      dry_run: dryRun,
    });

  let preview: { subscription_id: string; upcoming_amount_before: number; upcoming_amount_after: number }[] = [];
  await t.test('dry run: the count, a page of previews, nothing changed', async (t) => {
    const r = await migrate(api.url, true, '?per_page=5');
    t.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    t.equal(r.body.subscriptions, N);
    t.same(r.body.pagination, { page: 1, per_page: 5, total: N });
    preview = r.body.preview;
    t.equal(preview.length, 5);
    // 1–30 November at the clock's 10 November: before, one seat all month (10.00); after, one seat for 9 days,
    // two seats and support for 21 (3.00 + 14.00 + 3.50).
    for (const p of preview) {
      t.equal(p.upcoming_amount_before, 10);
      t.equal(p.upcoming_amount_after, 20.5);
    }
    const page2 = await migrate(api.url, true, '?per_page=5&page=2');
    t.equal(page2.body.preview.length, 5);
    t.notOk(
      page2.body.preview.some((p: { subscription_id: string }) =>
        preview.some((q) => q.subscription_id === p.subscription_id),
      ),
      'page 2 is other subscriptions',
    );
    t.equal(await onVersion(1), N, 'nothing moved');
    t.same(await events(), { n: 0, subs: 0 }, 'no event');
    const up = await call(
      api.url,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${preview[0]!.subscription_id}`,
      undefined,
      await customerToken(
        api.infra,
        customers.find((c) => c.accountId === ownerOf(preview[0]!.subscription_id))!.accountId,
      ),
    );
    t.equal(up.body.amount, 10, 'the upcoming invoice is unchanged');
  });

  function ownerOf(subId: string): string {
    const i = Number(subId.slice('sub_mig'.length));
    return customers[i % CUSTOMERS]!.accountId;
  }

  await t.test('bad requests', async (t) => {
    const bad = async (body: Record<string, unknown>, status: number, path = `/v1/plans/${plan}/migrate`) => {
      const r = await call(api.url, 'POST', path, {
        from_version: 1,
        to_version: 2,
        at: 'now',
        dry_run: true,
        ...body,
      });
      t.equal(r.status, status, `${JSON.stringify(body)} → ${status} ${JSON.stringify(r.body.errors ?? r.body.code)}`);
      return r.body;
    };
    t.equal((await bad({ to_version: 9 }, 404)).code, 'not_found');
    t.equal((await bad({ from_version: 9 }, 404)).code, 'not_found');
    await bad({}, 404, '/v1/plans/plan_nope/migrate');
    t.equal((await bad({ to_version: 1 }, 422)).errors[0].field, 'to_version');
    t.equal((await bad({ at: 'tomorrow' }, 422)).errors[0].field, 'at');
    t.equal((await bad({ dry_run: 'yes' }, 422)).errors[0].field, 'dry_run');
    const customer = await customerToken(api.infra, customers[0]!.accountId);
    const r = await call(
      api.url,
      'POST',
      `/v1/plans/${plan}/migrate`,
      { from_version: 1, to_version: 2, at: 'now', dry_run: true },
      customer,
    );
    t.equal(r.status, 403);
    t.equal(r.body.code, 'insufficient_scope');
  });

  await t.test('kill -9 mid-way, then two runs at once: each moved exactly once', async (t) => {
    const child = await startApiProcess(t, config);
    const exited = new Promise((resolve) => child.child.once('exit', resolve));
    void migrate(child.url, false).catch(() => undefined);
    await waitUntil(async () => (await onVersion(2)) >= 300, 'the first run to move some', 120_000);
    child.child.kill('SIGKILL');
    await exited;
    const movedBefore = await onVersion(2);
    t.ok(movedBefore < N, `killed mid-way: ${movedBefore} of ${N} moved`);
    t.same(await events(), { n: movedBefore, subs: movedBefore }, 'one event per moved subscription, no more');

    const [a, b] = await Promise.all([migrate(api.url, false), migrate(api.url, false)]);
    t.equal(a.status, 200, JSON.stringify(a.body).slice(0, 300));
    t.equal(b.status, 200, JSON.stringify(b.body).slice(0, 300));
    t.equal(movedBefore + a.body.subscriptions + b.body.subscriptions, N, 'the two runs moved the rest, once');
    t.equal(await onVersion(1), 0);
    t.equal(await onVersion(2), N);
    t.same(await events(), { n: N, subs: N }, 'one subscription.updated per subscription');
    const items = await pg.query(
      `SELECT count(*) FILTER (WHERE effective_to IS NULL)::int AS current,
              count(*) FILTER (WHERE effective_to = $2)::int AS closed,
              count(*) FILTER (WHERE effective_from = $2)::int AS opened
         FROM subscription_items WHERE subscription_id LIKE 'sub_mig%' AND $1::text IS NOT NULL`,
      [plan, CLOCK_TIME],
    );
    t.same(items.rows[0], { current: 2 * N, closed: N, opened: 2 * N }, 'each changed once, at the clock’s time');

    const again = await migrate(api.url, false);
    t.equal(again.body.subscriptions, 0, 'a further run moves nothing');
    t.same(await events(), { n: N, subs: N });
    const by = await call(api.url, 'GET', `/v1/subscriptions/${bystander}`);
    t.equal(by.body.plan_id, null, 'a subscription not on the plan is untouched');
  });

  await t.test('the dry-run preview equals the upcoming invoices after the move', async (t) => {
    for (const p of preview) {
      const token = await customerToken(api.infra, ownerOf(p.subscription_id));
      const up = await call(
        api.url,
        'GET',
        `/v1/billing/invoices/upcoming?subscription_id=${p.subscription_id}`,
        undefined,
        token,
      );
      t.equal(up.status, 200);
      t.equal(up.body.amount, p.upcoming_amount_after, `${p.subscription_id}: ${up.body.amount}`);
      const sub = await call(api.url, 'GET', `/v1/subscriptions/${p.subscription_id}`, undefined, token);
      t.equal(sub.body.plan_version, 2, 'the customer reads its new version');
    }
  });

  await t.test('at period_end: nothing until the period ends, then the next period has the new items', async (t) => {
    // Its own customer and clock: advancing the 10,000 subscriptions' clock would bill them all.
    const [c] = await createCustomers(api.url, ADMIN, 1, 'period-end');
    const ownClock = (await made('POST', '/v1/test_clocks', { frozen_time: CLOCK_TIME })).id;
    await made('POST', `/v1/test_clocks/${ownClock}/customers`, { customer_id: c!.id });
    const p2 = (
      await made('POST', '/v1/plans', {
        name: 'Solo',
        currency: 'USD',
        interval: 'month',
        items: [{ product_id: seat }],
      })
    ).id;
    await made('POST', `/v1/plans/${p2}/versions`, { items: [{ product_id: seat, quantity: 3 }] });
    const sub = (await made('POST', '/v1/subscriptions', { customer_id: c!.id, plan_id: p2, plan_version: 1 })).id;
    const body = { from_version: 1, to_version: 2, at: 'period_end' };
    const dry = await call(api.url, 'POST', `/v1/plans/${p2}/migrate`, { ...body, dry_run: true });
    t.same(dry.body.preview, [{ subscription_id: sub, upcoming_amount_before: 10, upcoming_amount_after: 10 }]);
    const r = await call(api.url, 'POST', `/v1/plans/${p2}/migrate`, { ...body, dry_run: false });
    t.equal(r.body.subscriptions, 1, 'scheduled');
    t.equal(
      (await call(api.url, 'POST', `/v1/plans/${p2}/migrate`, { ...body, dry_run: false })).body.subscriptions,
      0,
    );
    const token = await customerToken(api.infra, c!.accountId);
    let s = (await call(api.url, 'GET', `/v1/subscriptions/${sub}`, undefined, token)).body;
    t.equal(s.plan_version, 1, 'still version 1 before the period ends');
    t.same(
      s.scheduled_plan_change,
      { plan_id: s.plan_id, plan_version: 2, at: s.current_period_end },
      'the customer sees the move scheduled for its period’s end',
    );
    t.same(s.items, [{ product_id: seat, meter_id: null }]);

    await made('POST', `/v1/test_clocks/${ownClock}/advance`, { frozen_time: '2026-12-01T06:00:00Z' });
    s = (await call(api.url, 'GET', `/v1/subscriptions/${sub}`, undefined, token)).body;
    t.equal(s.plan_version, 2, 'moved at the period’s end');
    t.equal(s.scheduled_plan_change, null, 'nothing scheduled any more');
    t.same(s.items, [{ product_id: seat, meter_id: null, quantity: 3 }]);
    const invoices = (await call(api.url, 'GET', '/v1/billing/invoices?per_page=100', undefined, token)).body.data;
    const november = invoices.find((i: { subscription_id: string }) => i.subscription_id === sub);
    t.equal(november?.amount, 10, 'November billed version 1 whole');
    const up = await call(api.url, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub}`, undefined, token);
    t.equal(up.body.amount, 30, 'December: version 2 whole');
    const moves = await pg.query(
      "SELECT data FROM outbox_events WHERE type = 'subscription.updated' AND data->>'subscription_id' = $1 ORDER BY seq",
      [sub],
    );
    t.equal(moves.rows.length, 2, 'created, then moved once');
    t.match(moves.rows[1].data, { plan_id: p2, plan_version: 2, items: [{ product_id: seat, quantity: 3 }] });
    t.same(
      moves.rows[1].data.previous_attributes,
      { items: [{ product_id: seat, meter_id: null }], plan_version: 1 },
      'the event names the version it moved to and what it left',
    );
  });
});
