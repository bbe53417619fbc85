import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';

/**
 * Subscription lifecycle (issue 44 item 3; docs/billing.md "Cancel at the period's end"), against the real api,
 * Postgres and the billing run driven by test clocks: cancel_at_period_end set and undone by PATCH, only as far as
 * portal settings let a customer on the operator's subscription; at the period's end the last period is invoiced
 * whole, the subscription cancels once (events carry it as it now is) and nothing is billed after it.
 */
t.test('subscription lifecycle: cancel at the period end', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const grace = w.config.BILLING_GRACE_SECONDS;
  const plan = await w.product('Team plan', 20, 'USD');
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const clocked = async (who: TestAccount, frozen_time: string) => {
    const clockId = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time })).id as string;
    await w.made(admin, 'POST', `/v1/test_clocks/${clockId}/customers`, { customer_id: who.customerId });
    return clockId;
  };
  const advance = async (clockId: string, frozen_time: string) => {
    const r = await call(admin, 'POST', `/v1/test_clocks/${clockId}/advance`, { frozen_time });
    if (r.status !== 200) throw new Error(`advance → ${r.status} ${JSON.stringify(r.body)}`);
  };
  const invoicesOf = async (who: TestAccount) =>
    (await w.made(who.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort((x: any, y: any) =>
      x.period_start.localeCompare(y.period_start),
    );
  const events = async (type: string, subscriptionId: string) =>
    (
      await pg.query(`SELECT data FROM outbox_events WHERE type = $1 AND data->>'subscription_id' = $2 ORDER BY seq`, [
        type,
        subscriptionId,
      ])
    ).rows.map((r) => r.data);
  const afterGrace = (at: string) => new Date(Date.parse(at) + grace * 1000).toISOString();

  await t.test('set, undo, set again; at the period end: last invoice whole, canceled once', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Leaving Co' });
    const clockId = await clocked(a, '2026-11-10T12:00:00Z');
    await w.card(a);
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    t.match(sub, { cancel_at_period_end: false, cancel_at: null, canceled_at: null });

    const set = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    t.match(set, {
      status: 'active',
      cancel_at_period_end: true,
      cancel_at: '2026-12-01T00:00:00.000Z',
      current_period_end: '2026-12-01T00:00:00.000Z',
    });
    const undone = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      cancel_at_period_end: false,
    });
    t.match(undone, { status: 'active', cancel_at_period_end: false, cancel_at: null });
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    const again = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    t.equal(again.cancel_at, '2026-12-01T00:00:00.000Z', 'asking twice keeps the scheduled instant');
    const updated = await events('subscription.updated', sub.id);
    t.same(
      updated.map((e: any) => e.cancel_at_period_end),
      [false, true, false, true],
      'one subscription.updated per change (none for a repeat), each carrying the subscription as it now is',
    );
    t.match(updated[1], { status: 'active', cancel_at: '2026-12-01T00:00:00.000Z', items: [{ product_id: plan }] });

    // Just before the period's end: still active, nothing billed.
    await advance(clockId, '2026-11-30T23:59:59Z');
    t.equal((await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`)).status, 'active');
    await advance(clockId, afterGrace('2026-12-01T00:00:00Z'));
    const got = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`);
    t.match(got, {
      status: 'canceled',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: '2026-12-01T00:00:00.000Z',
      current_period_start: '2026-11-01T00:00:00.000Z',
      current_period_end: '2026-12-01T00:00:00.000Z',
    });
    const invoices = await invoicesOf(a);
    t.equal(invoices.length, 1, 'the last period invoiced');
    t.match(invoices[0], { subscription_id: sub.id, period_start: '2026-11-01', period_end: '2026-11-30', amount: 20 });
    t.match(invoices[0].status, /^(open|paid)$/, 'issued (not a draft)');

    // Two more months, one advance sent twice at once: nothing more billed, canceled exactly once.
    await Promise.all([advance(clockId, '2027-02-02T00:00:00Z'), advance(clockId, '2027-02-02T00:00:00Z')]);
    t.equal((await invoicesOf(a)).length, 1, 'nothing billed after the cancellation');
    const canceled = await events('subscription.canceled', sub.id);
    t.equal(canceled.length, 1, 'subscription.canceled once');
    t.match(canceled[0], { status: 'canceled', cancel_at_period_end: false, canceled_at: '2026-12-01T00:00:00.000Z' });
    const last = (await events('subscription.updated', sub.id)).at(-1);
    t.match(last, { status: 'canceled', canceled_at: '2026-12-01T00:00:00.000Z' });

    const late = await call(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: false });
    t.equal(late.status, 409, 'a canceled subscription is final');
    t.equal(late.body.code, 'subscription_canceled');
  });

  await t.test('a period invoiced in advance (a year): no next advance invoice after the cancellation', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Yearly Co' });
    const clockId = await clocked(a, '2026-11-10T12:00:00Z');
    await w.card(a);
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }],
      interval: 'year',
    });
    const set = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    t.equal(set.cancel_at, sub.current_period_end);
    await advance(clockId, afterGrace(new Date(Date.parse(sub.current_period_end) + 40 * 86_400_000).toISOString()));
    const invoices = await invoicesOf(a);
    t.equal(invoices.length, 1, 'only the first year’s advance invoice');
    t.equal(invoices[0].period_start, sub.current_period_start.slice(0, 10));
    t.equal((await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`)).status, 'canceled');
  });

  await t.test('pause collection: periods ending while paused are not invoiced; resumed: billed again', async (t) => {
    const calls = await w.product('API calls', 0.01, 'USD', 'metered');
    const a = await createTestAccount(w.api.infra, { name: 'Pausing Co' });
    const clockId = await clocked(a, '2026-11-10T12:00:00Z');
    await w.card(a);
    const meter = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: calls, meter_id: meter }],
    });
    t.equal(sub.pause_collection, null);
    const paused = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      pause_collection: { behavior: 'void' },
    });
    t.same(paused.pause_collection, { behavior: 'void', paused_at: '2026-11-10T12:00:00.000Z' });
    t.equal(paused.status, 'active');
    t.match((await events('subscription.updated', sub.id)).at(-1), { collection_paused: true });
    await w.usage(a, meter, [{ value: 100, timestamp: '2026-11-10T12:00:00Z' }]);
    await advance(clockId, '2026-12-10T00:00:00Z');
    t.same(await invoicesOf(a), [], 'November ended while paused: no invoice');
    const resumed = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { pause_collection: null });
    t.equal(resumed.pause_collection, null);
    await advance(clockId, afterGrace('2027-01-01T00:00:00Z'));
    const invoices = await invoicesOf(a);
    t.equal(invoices.length, 1, 'December, the period it resumed in, is invoiced; November never');
    t.match(
      invoices[0],
      { period_start: '2026-12-01', period_end: '2026-12-31', amount: 20 },
      'December’s flat fee; November’s usage (recorded while paused) is never billed later',
    );

    const yearly = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }],
      interval: 'year',
    });
    const refused = await call(a.tokens.write, 'PATCH', `/v1/subscriptions/${yearly.id}`, {
      pause_collection: { behavior: 'void' },
    });
    t.equal(refused.status, 409, 'invoiced in advance: not half paused');
    t.equal(refused.body.code, 'pause_unsupported');
    const bad = await call(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      pause_collection: { behavior: 'keep_as_draft' },
    });
    t.equal(bad.status, 422);
    t.match(bad.body.errors[0].field, /^pause_collection/);
  });

  await t.test('the operator’s subscription: the customer schedules it only when portal settings allow', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Managed Co' });
    const sub = await w.made(admin, 'POST', '/v1/subscriptions', {
      customer_id: a.customerId,
      items: [{ product_id: plan }],
    });
    const refused = await call(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
    t.equal(refused.status, 403);
    t.equal(refused.body.code, 'operator_terms');
    t.same(
      refused.body.errors.map((e: any) => e.field),
      ['cancel_at_period_end'],
    );
    t.equal((await w.made(admin, 'GET', `/v1/subscriptions/${sub.id}`)).cancel_at_period_end, false, 'unchanged');
    const pause = await call(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      pause_collection: { behavior: 'void' },
    });
    t.equal(pause.status, 403);
    t.same(
      pause.body.errors.map((e: any) => e.field),
      ['pause_collection'],
    );
    await w.made(admin, 'PATCH', '/v1/portal_settings', { customer_can_cancel: true });
    try {
      const set = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true });
      t.equal(set.cancel_at_period_end, true);
      const undo = await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
        cancel_at_period_end: false,
      });
      t.equal(undo.cancel_at_period_end, false);
    } finally {
      await w.made(admin, 'PATCH', '/v1/portal_settings', { customer_can_cancel: false });
    }
    const bad = await call(admin, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: 'yes' });
    t.equal(bad.status, 422);
    t.same(
      bad.body.errors.map((e: any) => e.field),
      ['cancel_at_period_end'],
    );
    const other = await createTestAccount(w.api.infra, { name: 'Other Co' });
    const foreign = await call(other.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      cancel_at_period_end: true,
    });
    t.equal(foreign.status, 404, 'another customer’s subscription does not exist for it');
  });
});
