import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * A usage correction to a period already invoiced (issue 18 §4): cancelling a record of October after October's
 * invoice makes billing's usage rule (queryUsageTotals) show less for October, and the late-usage adjustment
 * (docs/design.md §8 Invoice) credits the difference as one adjustment line on the next invoice — once, however
 * many runs follow.
 */
t.test('a cancellation in an invoiced period: one negative adjustment on the next invoice', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Corrected Co' });
  await w.card(a);
  const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
  const plan = await w.product('Plan', 10, 'USD');
  const metered = await w.product('API calls', 0.01, 'USD', 'metered');
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: metered, meter_id: calls }],
  });
  await w.backdate(sub.id, '2026-10-05T00:00:00Z');
  const invoices = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));
  const october = () =>
    w.made(a.tokens.read, 'GET', `/v1/meters/${calls}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`);

  await w.usage(a, calls, [
    { value: 900, timestamp: '2026-10-20T00:00:00Z', id: 'oct-good' },
    { value: 300, timestamp: '2026-10-21T12:00:00Z', id: 'oct-wrong' },
  ]);
  t.equal((await w.run('2026-11-01T01:00:00Z')).code, 0);
  const [oct] = await invoices();
  t.same(
    oct.lines.map((l: any) => [l.type, l.quantity, l.amount]),
    [
      ['flat', 1, 10],
      ['usage', 1200, 12],
    ],
    'October billed 1,200 calls',
  );

  const res = await fetch(`${w.api.url}/v1/meters/${calls}/usage/corrections`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${a.tokens.write}`,
      'content-type': 'application/json',
      'idempotency-key': 'oct-fix',
    },
    body: JSON.stringify({ cancel: ['oct-wrong'] }),
  });
  t.equal(res.status, 201);
  await waitUntil(async () => (await october()).value === 900, 'October at 900 after the cancellation');

  t.equal((await w.run('2026-12-01T01:00:00Z')).code, 0);
  const [, nov] = await invoices();
  const adjustments = nov.lines.filter((l: any) => l.type === 'adjustment');
  t.equal(adjustments.length, 1, 'one adjustment line');
  t.match(adjustments[0], {
    meter_id: calls,
    product_id: metered,
    quantity: -300,
    amount: -3,
    adjusts_invoice_id: oct.id,
  });
  const sum = nov.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
  t.ok(sum.eq(String(nov.amount)), 'amount = Σ lines');

  t.same(
    work((await w.run('2026-12-01T01:00:00Z')).json),
    { invoices: [], payments: [] },
    're-running the same close changes nothing',
  );
  t.equal((await w.run('2027-01-01T01:00:00Z')).code, 0);
  const [, , dec] = await invoices();
  t.same(
    dec.lines.map((l: any) => l.type),
    ['flat', 'usage'],
    'the next invoice: no second adjustment for the same correction',
  );
});
