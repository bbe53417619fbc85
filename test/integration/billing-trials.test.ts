import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * Trials (docs/billing.md "Trials") against the real api, consumer, ClickHouse and Postgres, with a test clock: a
 * 14-day trial with usage during it — nothing invoiced or charged before trial_end, the trial's usage not billed,
 * `subscription.trial_will_end` three days before, once; the first period is the one containing trial_end.
 */
t.test('trials', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  /**
   * Backfills usage and waits until reads count it: backfilled past hours reach the hourly rollups (which billing
   * reads too) with the consumer's next sweep.
   */
  const usage = async (who: TestAccount, meter: string, records: { value: number; timestamp: string }[]) => {
    await w.usage(who, meter, records);
    const days = records.map((r) => r.timestamp.slice(0, 10)).sort();
    const total = records.reduce((s, r) => s + r.value, 0);
    const path = `/v1/meters/${meter}/usage?window=none&start_date=${days[0]}&end_date=${days[days.length - 1]}`;
    await waitUntil(
      async () => (await w.made(who.tokens.read, 'GET', path)).value === total,
      'reads to count the usage',
    );
  };
  const advance = async (clockId: string, frozen_time: string) => {
    const r = await callJson(w.api.url, admin, 'POST', `/v1/test_clocks/${clockId}/advance`, { frozen_time });
    if (r.status !== 200) throw new Error(`advance → ${r.status} ${JSON.stringify(r.body)}`);
  };
  const customerAt = async (at: string) => {
    const a = await createTestAccount(w.api.infra);
    const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: at })).id;
    await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: a.customerId });
    await w.card(a);
    const meter = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
    return { a, clock, meter };
  };
  const invoicesOf = async (who: TestAccount) =>
    (await w.made(who.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort((x: any, y: any) =>
      x.period_start.localeCompare(y.period_start),
    );
  const notices = async (subscriptionId: string) =>
    (
      await pg.query(
        `SELECT data, created_at FROM outbox_events WHERE type = 'subscription.trial_will_end' AND data->>'subscription_id' = $1`,
        [subscriptionId],
      )
    ).rows;
  const plan = await w.product('Pro plan', 20, 'USD');
  const calls = await w.product('API calls', 0.01, 'USD', 'metered');

  await t.test('a 14-day trial with usage during it (calendar months)', async (t) => {
    const { a, clock, meter } = await customerAt('2026-09-10T12:00:00Z');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: calls, meter_id: meter }],
      trial_days: 14,
    });
    t.match(sub, {
      trial_end: '2026-09-24T12:00:00.000Z',
      current_period_start: '2026-09-01T00:00:00.000Z',
      current_period_end: '2026-10-01T00:00:00.000Z',
    });
    await usage(a, meter, [
      { value: 500, timestamp: '2026-09-15T08:00:00Z' },
      { value: 40, timestamp: '2026-09-24T11:59:59.999Z' },
      { value: 300, timestamp: '2026-09-24T12:00:00Z' },
      { value: 45, timestamp: '2026-09-30T23:00:00Z' },
    ]);
    await advance(clock, '2026-09-21T11:59:59Z');
    t.same(await notices(sub.id), [], 'no notice before three days ahead');
    await advance(clock, '2026-09-21T12:00:00Z');
    await advance(clock, '2026-09-24T11:59:00Z');
    const sent = await notices(sub.id);
    t.equal(sent.length, 1, 'subscription.trial_will_end, once');
    t.match(sent[0].data, {
      subscription_id: sub.id,
      trial_end: '2026-09-24T12:00:00.000Z',
      customer_id: a.customerId,
    });
    t.equal(sent[0].created_at instanceof Date, true);
    t.same(await invoicesOf(a), [], 'nothing invoiced during the trial');
    const upcoming = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    // The upcoming invoice prices what the close will bill (docs/test-clocks.md): the 345 calls already recorded
    // for after the trial's end (timestamps past the clock) are in it, the 540 trial calls are not.
    t.match(
      upcoming,
      { period_start: '2026-09-01', amount: 23.45 },
      'the trial’s usage is not in the upcoming invoice; the usage recorded after the trial is',
    );

    await advance(clock, '2026-10-02T00:00:00Z');
    const [inv, ...more] = await invoicesOf(a);
    t.same(more, [], 'one invoice');
    t.match(inv, {
      period_start: '2026-09-01',
      period_end: '2026-09-30',
      amount: 23.45,
      status: 'paid',
      created_at: '2026-10-01T01:00:00.000Z',
    });
    t.same(
      inv.lines.map((l: any) => [l.type, l.quantity, l.amount]),
      [
        ['flat', 1, 20],
        ['usage', 345, 3.45],
      ],
      'the flat item in full; the usage from trial_end only (540 trial calls not billed)',
    );
    t.equal((await notices(sub.id)).length, 1, 'still one notice');
  });

  await t.test('a yearly plan with a trial: its advance invoice at the trial’s end, not before', async (t) => {
    const annual = await w.product('Annual plan', 240, 'USD');
    const { a, clock } = await customerAt('2025-03-10T00:00:00Z');
    await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: annual }],
      interval: 'year',
      billing_anchor: 'start',
      trial_days: 14,
    });
    await advance(clock, '2025-03-23T23:59:59Z');
    t.same(await invoicesOf(a), [], 'nothing during the trial');
    await advance(clock, '2025-03-25T00:00:00Z');
    const invoices = await invoicesOf(a);
    t.same(
      invoices.map((i: any) => [i.reason, i.period_start, i.period_end, i.amount, i.status, i.created_at]),
      [['advance', '2025-03-24', '2026-03-23', 240, 'paid', '2025-03-24T00:00:00.000Z']],
    );
  });

  await t.test('canceled during its trial: nothing is ever billed', async (t) => {
    const { a, clock, meter } = await customerAt('2026-07-05T00:00:00Z');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: calls, meter_id: meter }],
      trial_days: 30,
    });
    await usage(a, meter, [{ value: 900, timestamp: '2026-07-06T00:00:00Z' }]);
    await advance(clock, '2026-07-20T00:00:00Z');
    await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { status: 'canceled' });
    await advance(clock, '2026-09-02T00:00:00Z');
    t.same(await invoicesOf(a), [], 'no invoice');
    t.equal((await notices(sub.id)).length, 0, 'no trial notice for a canceled subscription');
  });

  await t.test('anchor start: the anniversary is the trial’s end', async (t) => {
    const { a, clock, meter } = await customerAt('2026-08-01T00:00:00Z');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: calls, meter_id: meter }],
      billing_anchor: 'start',
      trial_end: '2026-08-15T00:00:00Z',
    });
    t.match(sub, {
      trial_end: '2026-08-15T00:00:00.000Z',
      current_period_start: '2026-08-15T00:00:00.000Z',
      current_period_end: '2026-09-15T00:00:00.000Z',
    });
    await usage(a, meter, [
      { value: 700, timestamp: '2026-08-14T23:59:59Z' },
      { value: 100, timestamp: '2026-08-15T00:00:00Z' },
    ]);
    await advance(clock, '2026-09-16T00:00:00Z');
    const invoices = await invoicesOf(a);
    t.equal(invoices.length, 1);
    t.match(invoices[0], { period_start: '2026-08-15', period_end: '2026-09-14', amount: 21 });
    t.equal((await notices(sub.id)).length, 1);
  });
});
