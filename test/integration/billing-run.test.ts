import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Worked invoices (docs/design.md §8 Invoice), checked to the cent, produced by `meterline billing run --now …` in
 * its own process over usage ingested through the real API and stored in ClickHouse.
 */
t.test('billing run: worked invoices', async (t) => {
  // Without drafts (BILLING_DRAFTS=false): nothing is written during the grace period. Drafts: billing-drafts.test.ts.
  const w = await billingWorld(t, { BILLING_DRAFTS: 'false' });
  const a = await createTestAccount(w.api.infra, { name: 'Acme Widgets Ltd' });
  await w.card(a);
  // A customer bills in one currency (price books, docs/plans.md): the JPY and KWD subscriptions are customers' own.
  const jp = await createTestAccount(w.api.infra, { name: 'Acme Japan KK' });
  const kw = await createTestAccount(w.api.infra, { name: 'Acme Kuwait' });
  await w.card(jp);
  await w.card(kw);
  const invoicesOf = async (subscriptionId: string, of = a) =>
    (await w.made(of.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === subscriptionId)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));

  // Catalog: a flat plan and one metered product per aggregation.
  const plan = await w.product('Pro plan', 49.99, 'USD');
  const callsP = await w.product('API calls', 0.001, 'USD', 'metered');
  const eventsP = await w.product('Events', 0.5, 'USD', 'metered');
  const peakP = await w.product('Peak connections', 0.25, 'USD', 'metered');
  const storageP = await w.product('Storage', 0.1, 'USD', 'metered');
  const latencyP = await w.product('Slow requests (p99 ms)', 0.01, 'USD', 'metered');
  const calls = await w.meter(a, 'API calls', 'requests', 'counter', 'sum');
  const events = await w.meter(a, 'Events', 'events', 'counter', 'count');
  const peak = await w.meter(a, 'Peak connections', 'connections', 'gauge', 'max');
  const storage = await w.meter(a, 'Storage', 'GB', 'gauge', 'last');
  const latency = await w.meter(a, 'Latency', 'ms', 'histogram', 'p99');
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [
      { product_id: plan },
      { product_id: callsP, meter_id: calls },
      { product_id: eventsP, meter_id: events },
      { product_id: peakP, meter_id: peak },
      { product_id: storageP, meter_id: storage },
      { product_id: latencyP, meter_id: latency },
    ],
  });
  // Created in October 2026, so October is its first period (usage may be posted up to 35 days back).
  await w.backdate(sub.id, '2026-10-05T10:00:00Z');

  // JPY and KWD: half-way amounts round away from zero (2.5 JPY → 3, 0.0125 KWD → 0.013).
  const yenPlan = await w.product('Basic (JP)', 1000, 'JPY');
  const yenCalls = await w.product('API calls (JP)', 0.5, 'JPY', 'metered');
  const kwdPlan = await w.product('Basic (KW)', 1.5, 'KWD');
  const kwdCalls = await w.product('API calls (KW)', 0.0025, 'KWD', 'metered');
  const jpMeter = await w.meter(jp, 'JP calls', 'requests', 'counter', 'sum');
  const kwMeter = await w.meter(kw, 'KW calls', 'requests', 'counter', 'sum');
  const yenSub = await w.made(jp.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: yenPlan }, { product_id: yenCalls, meter_id: jpMeter }],
  });
  const kwdSub = await w.made(kw.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: kwdPlan }, { product_id: kwdCalls, meter_id: kwMeter }],
  });
  await w.backdate(yenSub.id, '2026-10-20T00:00:00Z');
  await w.backdate(kwdSub.id, '2026-10-20T00:00:00Z');

  // October usage; a few records just after the period belong to November.
  await w.usage(a, calls, [
    { value: 1000, timestamp: '2026-10-25T08:00:00Z' },
    { value: 2345, timestamp: '2026-10-31T23:59:59.999Z' },
    { value: 100, timestamp: '2026-10-26T00:00:00Z', id: 'retried-usage-1' },
    { value: 5, timestamp: '2026-11-01T00:00:00Z' },
  ]);
  // The client retries one record (same id, meter and timestamp): it counts once.
  await w.usage(a, calls, [{ value: 100, timestamp: '2026-10-26T00:00:00Z', id: 'retried-usage-1' }], 0);
  await w.usage(
    a,
    events,
    Array.from({ length: 7 }, (_, i) => ({ value: 1, timestamp: `2026-10-2${i}T12:00:00Z` })),
  );
  await w.usage(a, peak, [
    { value: 3, timestamp: '2026-10-25T00:00:00Z' },
    { value: 12.5, timestamp: '2026-10-26T00:00:00Z' },
    { value: 7, timestamp: '2026-10-27T00:00:00Z' },
  ]);
  await w.usage(a, storage, [
    { value: 40, timestamp: '2026-10-27T00:00:00Z' },
    { value: 55.55, timestamp: '2026-10-30T00:00:00Z' },
    { value: 10, timestamp: '2026-11-02T00:00:00Z' },
  ]);
  await w.usage(
    a,
    latency,
    [250, 250, 250].map((v, i) => ({ value: v, timestamp: `2026-10-2${i + 1}T00:00:00Z` })),
  );
  await w.usage(jp, jpMeter, [{ value: 5, timestamp: '2026-10-28T00:00:00Z' }]);
  await w.usage(kw, kwMeter, [{ value: 5, timestamp: '2026-10-28T00:00:00Z' }]);

  await t.test('inside the grace period nothing closes; usage arriving then still counts', async (t) => {
    const early = await w.run('2026-11-01T00:59:59.999Z');
    t.equal(early.code, 0, early.stderr);
    // Why nothing closed, and when it will: October ends at midnight and closes after the one-hour grace period.
    const reason =
      'no period is due at 2026-11-01T00:59:59.999Z: the next one ends 2026-11-01T00:00:00.000Z and closes at 2026-11-01T01:00:00.000Z, after the 3600 s grace period (BILLING_GRACE_SECONDS) that lets late usage count';
    t.same(early.json, { invoices: [], payments: [], reason, next_due_at: '2026-11-01T01:00:00.000Z' });
    t.match(early.stderr, `billing: no invoice: ${reason}`);
    // Late usage of October, arriving during the grace period.
    await w.usage(a, calls, [{ value: 50, timestamp: '2026-10-31T12:00:00Z' }]);
  });

  await t.test('October: flat + sum, count, max, last, p99 meters to the cent', async (t) => {
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
    t.equal(run.json.invoices.length, 3, 'one invoice per subscription');
    t.notOk('reason' in run.json || 'next_due_at' in run.json, 'a run that closed periods gives no reason');
    t.notMatch(run.stderr, /Warning/, 'no warning on stderr (a pg client is never given two queries at once)');
    // The close numbers the invoices it creates, one series: three consecutive numbers.
    const numbers = (
      await w.api.infra.pg.query<{ number: string }>('SELECT number::text FROM invoices WHERE id = ANY($1)', [
        run.json.invoices.map((i: { id: string }) => i.id),
      ])
    ).rows
      .map((r) => Number(r.number))
      .sort((x, y) => x - y);
    t.same(numbers, [numbers[0], numbers[0]! + 1, numbers[0]! + 2], 'numbered consecutively');
    const [oct] = await invoicesOf(sub.id);
    t.ok(
      numbers.map((n) => `ML-2026-${String(n).padStart(6, '0')}`).includes(oct.number),
      `the API gives one of them, as printed with INVOICE_NUMBER_PREFIX's default ML-{YYYY}- (${oct.number})`,
    );
    t.match(oct, {
      status: 'paid',
      currency: 'USD',
      period_start: '2026-10-01',
      period_end: '2026-10-31',
      attempt_count: 1,
      customer_id: a.customerId,
      created_at: '2026-11-01T01:00:00.000Z',
    });
    // calls: 1000 + 2345 + 100 (retried, once) + 50 (late) = 3495 × 0.001 = 3.495 → 3.50
    // events: 7 × 0.5 = 3.5; peak: max 12.5 × 0.25 = 3.125 → 3.13; storage: last 55.55 × 0.1 = 5.555 → 5.56;
    // latency: p99 250 × 0.01 = 2.5. Total 49.99 + 3.5 + 3.5 + 3.13 + 5.56 + 2.5 = 68.18.
    t.same(oct.lines, [
      {
        type: 'flat',
        product_id: plan,
        meter_id: null,
        description: 'Pro plan',
        quantity: 1,
        unit_price: 49.99,
        amount: 49.99,
      },
      {
        type: 'usage',
        product_id: callsP,
        meter_id: calls,
        description: 'API calls — 3,495 requests',
        quantity: 3495,
        unit_price: 0.001,
        amount: 3.5,
      },
      {
        type: 'usage',
        product_id: eventsP,
        meter_id: events,
        description: 'Events — 7 events',
        quantity: 7,
        unit_price: 0.5,
        amount: 3.5,
      },
      {
        type: 'usage',
        product_id: peakP,
        meter_id: peak,
        description: 'Peak connections — 12.5 connections',
        quantity: 12.5,
        unit_price: 0.25,
        amount: 3.13,
      },
      {
        type: 'usage',
        product_id: storageP,
        meter_id: storage,
        description: 'Storage — 55.55 GB',
        quantity: 55.55,
        unit_price: 0.1,
        amount: 5.56,
      },
      {
        type: 'usage',
        product_id: latencyP,
        meter_id: latency,
        description: 'Slow requests (p99 ms) — 250 ms',
        quantity: 250,
        unit_price: 0.01,
        amount: 2.5,
      },
    ]);
    t.equal(oct.amount, 68.18);
    t.same(
      run.json.invoices.find((i: any) => i.subscription_id === sub.id),
      {
        id: oct.id,
        customer_id: a.customerId,
        subscription_id: sub.id,
        amount: 68.18,
        currency: 'USD',
        status: 'paid',
      },
    );
    // Each metered quantity is exactly what GET …/usage?window=none reports for the period.
    for (const line of oct.lines.filter((l: any) => l.meter_id)) {
      const u = await callJson(
        w.api.url,
        a.tokens.read,
        'GET',
        `/v1/meters/${line.meter_id}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
      );
      t.equal(u.body.value, line.quantity, `quantity of ${line.description}`);
    }
    const [yen] = await invoicesOf(yenSub.id, jp);
    t.same(
      { amount: yen.amount, currency: yen.currency, lines: yen.lines.map((l: any) => [l.quantity, l.amount]) },
      {
        amount: 1003,
        currency: 'JPY',
        lines: [
          [1, 1000],
          [5, 3],
        ],
      },
      '5 × 0.5 JPY = 2.5 → 3',
    );
    const [kwd] = await invoicesOf(kwdSub.id, kw);
    t.same(
      { amount: kwd.amount, lines: kwd.lines.map((l: any) => [l.quantity, l.amount]) },
      {
        amount: 1.513,
        lines: [
          [1, 1.5],
          [5, 0.013],
        ],
      },
      '5 × 0.0025 KWD = 0.0125 → 0.013',
    );
    const again = await w.run('2026-11-01T01:00:00Z');
    t.same(work(again.json), { invoices: [], payments: [] }, 'a repeated run at the same instant invoices nothing');
    t.equal(again.json.next_due_at, '2026-12-01T01:00:00.000Z', 'November is next: due an hour after it ends');
  });

  await t.test(
    'a canceled subscription: its last period once, metered usage only before the cancellation',
    async (t) => {
      const gone = await w.product('Support', 10, 'USD');
      const goneCalls = await w.product('Support tickets', 0.01, 'USD', 'metered');
      const tickets = await w.meter(a, 'Tickets', 'tickets', 'counter', 'sum');
      const s = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: gone }, { product_id: goneCalls, meter_id: tickets }],
      });
      await w.usage(a, tickets, [{ value: 30, timestamp: new Date(Date.now() - 60_000).toISOString() }]);
      await w.made(a.tokens.write, 'PATCH', `/v1/subscriptions/${s.id}`, { status: 'canceled' });
      const canceledAt = (await w.api.infra.pg.query('SELECT canceled_at FROM subscriptions WHERE id = $1', [s.id]))
        .rows[0].canceled_at as Date;
      await w.usage(a, tickets, [{ value: 20, timestamp: new Date(canceledAt.getTime() + 1).toISOString() }]);
      const month = canceledAt.toISOString().slice(0, 7);
      const next = new Date(Date.UTC(canceledAt.getUTCFullYear(), canceledAt.getUTCMonth() + 1, 1, 1)).toISOString();
      const run = await w.run(next);
      t.equal(run.code, 0, run.stderr);
      const [last] = await invoicesOf(s.id);
      t.match(last, { period_start: `${month}-01`, amount: 10.3 });
      t.same(
        last.lines.map((l: any) => [l.quantity, l.amount]),
        [
          [1, 10],
          [30, 0.3],
        ],
        'flat in full, 30 tickets before the cancellation, not the 20 after',
      );
      await w.run('2027-06-01T01:00:00Z');
      t.equal((await invoicesOf(s.id)).length, 1, 'never invoiced again');
    },
  );

  await t.test(
    'November (zero usage on some meters), then months of 31, 28, 30 and 29 days and December → January',
    async (t) => {
      const run = await w.run('2028-03-01T01:00:00Z');
      t.equal(run.code, 0, run.stderr);
      const all = await invoicesOf(sub.id);
      t.equal(all.length, 17, 'October 2026 to February 2028, one invoice each');
      const nov = all[1];
      t.same(
        nov.lines.map((l: any) => [l.quantity, l.amount]),
        [
          [1, 49.99],
          [5, 0.01],
          [0, 0],
          [0, 0],
          [10, 1],
          [0, 0],
        ],
        'calls 5 × 0.001 = 0.005 → 0.01; storage last 10; no events, peak or latency → 0',
      );
      t.equal(nov.amount, 51);
      const periods = all.map((i: any) => [i.period_start, i.period_end]);
      t.same(periods.slice(1, 5), [
        ['2026-11-01', '2026-11-30'],
        ['2026-12-01', '2026-12-31'],
        ['2027-01-01', '2027-01-31'],
        ['2027-02-01', '2027-02-28'],
      ]);
      t.same(periods[6], ['2027-04-01', '2027-04-30']);
      t.same(periods[16], ['2028-02-01', '2028-02-29'], 'leap February');
      for (const inv of all) {
        const sum = inv.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
        t.ok(sum.eq(String(inv.amount)), `${inv.period_start}: amount = Σ lines`);
      }
      t.ok(
        all.slice(2).every((i: any) => i.amount === 49.99),
        'months without usage: the flat price alone',
      );
      t.match(run.stderr, /closed \d+ of \d+ periods/, 'progress on stderr');
    },
  );
});
