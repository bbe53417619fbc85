import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * Test clocks (docs/test-clocks.md) against the real api, consumer, ClickHouse and Postgres: customers on a clock
 * live at its time — their subscriptions start, their current period, upcoming invoice and default usage window
 * follow it — and an advance runs, in order, every period close (after BILLING_GRACE_SECONDS), charge and dunning
 * retry due on the way, once, even when repeated after a crash or sent twice at once. Runs at real time
 * (`meterline billing run`) leave clocked customers alone.
 */
t.test('test clocks', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const grace = w.config.BILLING_GRACE_SECONDS;
  const plan = await w.product('Team plan', 20, 'USD');
  const callsP = await w.product('API calls', 0.01, 'USD', 'metered');
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const clock = async (frozen_time: string) => (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time })).id;
  const attach = (clockId: string, who: TestAccount) =>
    w.made(admin, 'POST', `/v1/test_clocks/${clockId}/customers`, { customer_id: who.customerId });
  const advance = (clockId: string, frozen_time: string) =>
    call(admin, 'POST', `/v1/test_clocks/${clockId}/advance`, { frozen_time });
  const invoicesOf = async (who: TestAccount) =>
    (await w.made(who.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort((x: any, y: any) =>
      x.period_start.localeCompare(y.period_start),
    );
  const attemptsOf = async (invoiceId: string) =>
    (
      await pg.query(
        'SELECT attempt, status, failure_code, created_at FROM payment_attempts WHERE invoice_id = $1 ORDER BY attempt',
        [invoiceId],
      )
    ).rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
  const afterGrace = (periodEnd: string) => new Date(Date.parse(periodEnd) + grace * 1000).toISOString();

  await t.test('create, get, list: 201 + Location, the clock as created', async (t) => {
    const r = await call(admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-11-10T12:00:00+01:00', name: 'demo' });
    t.equal(r.status, 201);
    t.equal(r.headers.get('location'), `/v1/test_clocks/${r.body.id}`);
    t.match(r.body, {
      id: /^clock_[0-9A-Za-z]{22}$/,
      name: 'demo',
      frozen_time: '2026-11-10T11:00:00.000Z',
      status: 'ready',
      customer_ids: [],
      created_at: /^\d{4}-/,
    });
    t.same((await w.made(admin, 'GET', `/v1/test_clocks/${r.body.id}`)).frozen_time, '2026-11-10T11:00:00.000Z');
    const list = await w.made(admin, 'GET', '/v1/test_clocks?per_page=100');
    t.ok(list.data.some((c: any) => c.id === r.body.id));
    t.equal((await call(admin, 'DELETE', `/v1/test_clocks/${r.body.id}`)).status, 204);
    t.equal((await call(admin, 'GET', `/v1/test_clocks/${r.body.id}`)).status, 404, 'gone once deleted');
  });

  await t.test(
    'a customer on a clock: its time everywhere; month end + grace → exactly one invoice, charged',
    async (t) => {
      const a = await createTestAccount(w.api.infra, { name: 'Clocked Co' });
      const c1 = await clock('2026-11-10T12:00:00Z');
      t.same((await attach(c1, a)).customer_ids, [a.customerId]);
      await w.card(a);
      const meter = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
      const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: plan }, { product_id: callsP, meter_id: meter }],
      });
      t.match(sub, {
        created_at: '2026-11-10T12:00:00.000Z',
        current_period_start: '2026-11-01T00:00:00.000Z',
        current_period_end: '2026-12-01T00:00:00.000Z',
      });
      await w.usage(a, meter, [
        { value: 1000, timestamp: '2026-11-03T08:00:00Z' },
        { value: 234, timestamp: '2026-11-09T23:59:59Z' },
      ]);
      // Backfilled hours reach the hourly rollups with the next sweep: wait for the read to count them.
      let usage: any;
      await waitUntil(async () => {
        usage = await w.made(a.tokens.read, 'GET', `/v1/meters/${meter}/usage?window=month`);
        return usage.value === 1234;
      }, 'the usage read to count the backfilled records');
      t.match(usage, { start_date: '2026-11-01', end_date: '2026-11-10', value: 1234 }, 'default window: the clock’s');
      const upcoming = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
      t.match(upcoming, { amount: 32.34, period_start: '2026-11-01', created_at: '2026-11-10T12:00:00.000Z' });

      // A run at real time (the billing role's, or the CLI's) never bills a clocked customer.
      const live = await w.run('2027-01-15T00:00:00Z');
      t.equal(live.code, 0, live.stderr);
      t.same(await invoicesOf(a), [], 'the real-time run left the clocked customer alone');

      const justBefore = await advance(
        c1,
        new Date(Date.parse(afterGrace('2026-12-01T00:00:00Z')) - 1000).toISOString(),
      );
      t.equal(justBefore.status, 200, JSON.stringify(justBefore.body));
      // Drafts (the default): the period's end wrote the invoice as a draft — not numbered, not charged yet.
      const drafts = await invoicesOf(a);
      t.equal(drafts.length, 1, 'one second before the grace period ends: one invoice, a draft');
      t.match(drafts[0], { status: 'draft', number: null, amount: 32.34, created_at: '2026-12-01T00:00:00.000Z' });
      t.equal(await w.charges(drafts[0].id), 0, 'a draft is not charged');
      const closed = await advance(c1, '2026-12-02T00:00:00Z');
      t.equal(closed.status, 200, JSON.stringify(closed.body));
      t.match(closed.body, { id: c1, frozen_time: '2026-12-02T00:00:00.000Z', status: 'ready' });
      const invoices = await invoicesOf(a);
      t.equal(invoices.length, 1, 'exactly one invoice');
      t.match(invoices[0], {
        subscription_id: sub.id,
        period_start: '2026-11-01',
        period_end: '2026-11-30',
        amount: 32.34,
        status: 'paid',
        attempt_count: 1,
        created_at: afterGrace('2026-12-01T00:00:00Z'),
        paid_at: afterGrace('2026-12-01T00:00:00Z'),
      });
      t.equal(await w.charges(invoices[0].id), 1, 'one charge, in the sandbox processor’s ledger');
      // The operator refunds part of it: at the clock's time, through the sandbox.
      const note = await call(admin, 'POST', `/v1/billing/invoices/${invoices[0].id}/credit-notes`, {
        amount: 2.34,
        reason: 'goodwill',
      });
      t.equal(note.status, 201, JSON.stringify(note.body));
      t.match(note.body, { type: 'refund', amount: 2.34, created_at: '2026-12-02T00:00:00.000Z' });
      t.equal(Number((await pg.query(`SELECT count(*) AS n FROM sandbox_refunds WHERE amount = 2.34`)).rows[0].n), 1);
      t.match(await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`), {
        current_period_start: '2026-12-01T00:00:00.000Z',
        current_period_end: '2027-01-01T00:00:00.000Z',
      });
      t.match(await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`), {
        period_start: '2026-12-01',
        amount: 20,
        created_at: '2026-12-02T00:00:00.000Z',
      });
    },
  );

  await t.test(
    'a clock made a minute before real time: the upcoming invoice prices the usage sent now, as the invoice bills it',
    async (t) => {
      // docs/test-clocks.md's advice (and the walkthrough's): records are sent at real time, after the clock's time.
      const a = await createTestAccount(w.api.infra, { name: 'Preview Co' });
      const tokensP = await w.product('LLM tokens', 0.00002, 'USD', 'metered');
      const c = await clock(new Date(Date.now() - 60_000).toISOString());
      await attach(c, a);
      await w.card(a);
      const meter = await w.meter(a, 'LLM tokens', 'tokens', 'counter', 'sum');
      const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: tokensP, meter_id: meter }],
      });
      await w.usage(a, meter, [{ value: 250_000, timestamp: new Date().toISOString() }]);
      const metered = (u: any) => u.lines.find((l: any) => l.meter_id === meter);
      let upcoming: any;
      await waitUntil(
        async () => {
          upcoming = await w.made(admin, 'GET', `/v1/billing/invoices/upcoming?customer_id=${a.customerId}`);
          return metered(upcoming)?.quantity !== 0;
        },
        'the upcoming invoice to count the record (it never did when priced up to the clock’s time)',
        15_000,
      );
      t.match(metered(upcoming), { quantity: 250_000, amount: 5 }, '250,000 × 0.00002 = 5.00');
      t.equal(upcoming.amount, 5);

      const advanced = await advance(c, afterGrace(sub.current_period_end));
      t.equal(advanced.status, 200, JSON.stringify(advanced.body));
      const [invoice] = await invoicesOf(a);
      t.match(
        invoice,
        { subscription_id: sub.id, amount: upcoming.amount },
        'the invoice bills what the preview showed',
      );
      t.same(
        invoice.lines.map((l: any) => [l.meter_id, l.quantity, l.amount]),
        upcoming.lines.map((l: any) => [l.meter_id, l.quantity, l.amount]),
      );
    },
  );

  await t.test('a failing card: the retries run at their dunning times as the clock passes them', async (t) => {
    const poor = await createTestAccount(w.api.infra);
    const c2 = await clock('2026-11-20T09:30:00Z');
    await attach(c2, poor);
    await w.card(poor, '4000000000009995');
    await w.made(poor.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    const r = await advance(c2, '2026-12-08T00:00:00Z');
    t.equal(r.status, 200, JSON.stringify(r.body));
    const [inv] = await invoicesOf(poor);
    const created = afterGrace('2026-12-01T00:00:00Z');
    const plusDays = (d: number) => new Date(Date.parse(created) + d * 86_400_000).toISOString();
    t.match(inv, { amount: 20, status: 'uncollectible', attempt_count: 4, next_payment_attempt_at: null });
    t.same(
      await attemptsOf(inv.id),
      [0, 1, 3, 5].map((d, i) => ({
        attempt: i + 1,
        status: 'failed',
        failure_code: 'insufficient_funds',
        created_at: plusDays(d),
      })),
      'attempts at creation, +1, +3 and +5 days, each once',
    );
    t.equal(await w.charges(inv.id), 4);

    // The customer pays by hand with a good card: at the clock's time, through the sandbox.
    const good = await w.card(poor, '4242424242424242');
    await w.made(poor.tokens.write, 'PATCH', `/v1/billing/payment-methods/${good}/default`);
    const paid = await call(poor.tokens.write, 'POST', `/v1/billing/invoices/${inv.id}/pay`);
    t.equal(paid.status, 200, JSON.stringify(paid.body));
    t.match(paid.body, { status: 'paid', paid_at: '2026-12-08T00:00:00.000Z', attempt_count: 5 });
  });

  await t.test('twice at once, and again after a crash: nothing doubled', async (t) => {
    const c = await createTestAccount(w.api.infra);
    const c3 = await clock('2026-11-20T00:00:00Z');
    await attach(c3, c);
    await w.card(c);
    await w.made(c.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    const both = await Promise.all([advance(c3, '2026-12-02T00:00:00Z'), advance(c3, '2026-12-02T00:00:00Z')]);
    t.same(
      both.map((r) => [r.status, r.body.frozen_time]),
      [
        [200, '2026-12-02T00:00:00.000Z'],
        [200, '2026-12-02T00:00:00.000Z'],
      ],
      'the second waits for the first and finds the clock there',
    );
    const [inv] = await invoicesOf(c);
    t.equal((await invoicesOf(c)).length, 1, 'one invoice');
    t.equal(await w.charges(inv.id), 1, 'one charge');

    // A crash after the close but before the clock recorded its step: the clock still shows the old time.
    await pg.query(`UPDATE test_clocks SET frozen_time = '2026-11-20T00:00:00Z', status = 'advancing' WHERE id = $1`, [
      c3,
    ]);
    const again = await advance(c3, '2026-12-02T00:00:00Z');
    t.match(again.body, { frozen_time: '2026-12-02T00:00:00.000Z', status: 'ready' });
    t.equal((await invoicesOf(c)).length, 1, 'still one invoice');
    t.equal(await w.charges(inv.id), 1, 'still one charge');
  });

  await t.test('bad input: precise problems', async (t) => {
    const c4 = await clock('2026-11-20T00:00:00Z');
    for (const frozen_time of ['2026-11-19T23:59:59Z', '2026-11-20T00:00:00Z']) {
      const back = await advance(c4, frozen_time);
      t.equal(back.status, 422, frozen_time);
      t.same(back.body.errors, [
        {
          field: 'frozen_time',
          message: "must be after the clock's frozen_time (2026-11-20T00:00:00.000Z): a test clock only moves forward",
        },
      ]);
    }
    const format = await advance(c4, '2026-11-21');
    t.equal(format.status, 422);
    t.equal(format.body.errors[0].field, 'frozen_time');
    const created = await call(admin, 'POST', '/v1/test_clocks', { frozen_time: 1764000000 });
    t.equal(created.status, 422);
    t.equal(created.body.errors[0].field, 'frozen_time');
    const unknown = await advance('clock_0000000000000000000000', '2027-01-01T00:00:00Z');
    t.equal(unknown.status, 404);
    t.equal(unknown.body.code, 'not_found');
    const noCustomer = await call(admin, 'POST', `/v1/test_clocks/${c4}/customers`, { customer_id: 'cus_nobody' });
    t.equal(noCustomer.status, 422);
    t.same(noCustomer.body.errors, [{ field: 'customer_id', message: 'no such customer' }]);
    const busy = await createTestAccount(w.api.infra);
    await w.made(busy.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    const withSubs = await call(admin, 'POST', `/v1/test_clocks/${c4}/customers`, { customer_id: busy.customerId });
    t.equal(withSubs.status, 409);
    t.equal(withSubs.body.code, 'customer_has_subscriptions');
    const d = await createTestAccount(w.api.infra);
    await attach(c4, d);
    const inUse = await call(admin, 'DELETE', `/v1/test_clocks/${c4}`);
    t.equal(inUse.status, 409);
    t.equal(inUse.body.code, 'test_clock_in_use');
    const notAdmin = await call(d.tokens.write, 'POST', '/v1/test_clocks', { frozen_time: '2026-11-20T00:00:00Z' });
    t.equal(notAdmin.status, 403);
    t.equal(notAdmin.body.code, 'insufficient_scope');
  });

  t.test('the real-time run still bills customers on no clock', async (t) => {
    const live = await createTestAccount(w.api.infra);
    await w.card(live);
    const sub = await w.made(live.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    const r = await w.run('2026-11-01T01:00:00Z');
    t.same(
      work(r.json).invoices.map((i: any) => [i.subscription_id, i.amount, i.status]),
      [[sub.id, 20, 'paid']],
      'only the live customer’s period closed',
    );
  });
});
