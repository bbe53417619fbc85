import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { Decimal } from '../../shared/money/decimal.js';
import { dayFromEnd, dayIn, monthDays } from '../fixtures/calendar.js';

/**
 * Late usage billed automatically (docs/design.md §8 Invoice): usage that arrives for a period already invoiced is
 * re-priced at that period's rates and billed as an `adjustment` line on the next invoice — the difference
 * between the re-priced period and everything billed for it so far, so a record crossing a tier boundary is
 * priced right, and each late record is billed exactly once however many runs follow.
 * October, November, December and January stand for last month, this month and the two after (test/fixtures/calendar.ts).
 */
t.test('late usage: a record crossing a tier boundary is billed once, as an adjustment', async (t) => {
  const w = await billingWorld(t);
  const a = await createTestAccount(w.api.infra, { name: 'Late Co' });
  await w.card(a);
  const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
  const plan = await w.product('Plan', 10, 'USD');
  const tiered = (
    await w.made(w.operator.tokens.admin, 'POST', '/v1/products', {
      name: 'API calls',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 1000, unit_price: 0.01 },
        { up_to: null, unit_price: 0.005 },
      ],
    })
  ).id;
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: tiered, meter_id: calls }],
  });
  await w.backdate(sub.id, dayIn(-1, 5));
  const invoices = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));

  // The usage query (what billing reads) shows a late record once its hour's rollup is recomputed, just after
  // the raw row lands: wait for October's total there before billing.
  const octoberShows = (total: number) =>
    waitUntil(
      async () =>
        (
          await w.made(
            a.tokens.read,
            'GET',
            `/v1/meters/${calls}/usage?start_date=${monthDays(-1).first}&end_date=${monthDays(-1).last}&window=none`,
          )
        ).value === total,
      `October at ${total}`,
    );
  await w.usage(a, calls, [{ value: 900, timestamp: dayIn(-1, 20) }]);
  const oct = await w.run(dayIn(0, 1, 1));
  t.equal(oct.code, 0, oct.stderr);
  const [october] = await invoices();
  t.same(
    october.lines.map((l: any) => [l.type, l.quantity, l.amount]),
    [
      ['flat', 1, 10],
      ['usage', 900, 9],
    ],
    'October: 900 × 0.01',
  );

  // 300 more October calls arrive after October was invoiced: 100 fall in tier 1, 200 in tier 2.
  await w.usage(a, calls, [{ value: 300, timestamp: dayFromEnd(-1, 2, 12), id: 'late-oct-1' }]);
  await octoberShows(1200);
  const adjustment = {
    type: 'adjustment',
    product_id: tiered,
    meter_id: calls,
    description: `Usage adjustment for ${monthDays(-1).first} to ${monthDays(-1).last} (invoice ${october.id}): API calls — +300 requests, now 1,200 requests (graduated: 1,000 × 0.01 + 200 × 0.005); billed before 9`,
    quantity: 300,
    unit_price: 0.005,
    amount: 2, // re-priced 1,000 × 0.01 + 200 × 0.005 = 11.00, billed 9.00 (300 × 0.01 would be 3.00, 300 × 0.005 1.50)
    adjusts_invoice_id: october.id,
  };

  await t.test('the upcoming invoice already shows the adjustment', async (t) => {
    const up = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.same(up.lines.at(-1), adjustment);
  });

  await t.test('November’s invoice carries it once; re-running the same close changes nothing', async (t) => {
    const run = await w.run(dayIn(1, 1, 1));
    t.equal(run.code, 0, run.stderr);
    const [, november] = await invoices();
    t.same(november.lines, [
      { type: 'flat', product_id: plan, meter_id: null, description: 'Plan', quantity: 1, unit_price: 10, amount: 10 },
      {
        type: 'usage',
        product_id: tiered,
        meter_id: calls,
        description: 'API calls — 0 requests (graduated: no tier reached)',
        quantity: 0,
        unit_price: 0.01,
        amount: 0,
      },
      adjustment,
    ]);
    t.equal(november.amount, 12);
    const again = await w.run(dayIn(1, 1, 1));
    t.same(work(again.json), { invoices: [], payments: [] });
    t.equal(await w.charges(november.id), 1, 'charged once');
  });

  await t.test(
    'the next run bills nothing more for October, until more October usage arrives (then only that)',
    async (t) => {
      const dec = await w.run(dayIn(2, 1, 1));
      t.equal(dec.code, 0, dec.stderr);
      const [, , december] = await invoices();
      t.same(
        december.lines.map((l: any) => l.type),
        ['flat', 'usage'],
        'no second adjustment for the same record',
      );
      // A retry of the late record (same id) counts once; one new record of 100 is all that is left to bill.
      await w.usage(a, calls, [{ value: 300, timestamp: dayFromEnd(-1, 2, 12), id: 'late-oct-1' }], 0);
      await w.usage(a, calls, [{ value: 100, timestamp: dayFromEnd(-1, 1, 12) }]);
      await octoberShows(1300);
      const jan = await w.run(dayIn(3, 1, 1));
      t.equal(jan.code, 0, jan.stderr);
      const all = await invoices();
      const january = all[3];
      t.same(
        january.lines.slice(2).map((l: any) => [l.type, l.quantity, l.amount, l.adjusts_invoice_id]),
        [['adjustment', 100, 0.5, october.id]],
        '100 × 0.005, all in tier 2',
      );
      for (const inv of all) {
        const sum = inv.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
        t.ok(sum.eq(String(inv.amount)), `${inv.period_start}: amount = Σ lines`);
      }
      const octTotal = [
        ...october.lines.filter((l: any) => l.type === 'usage'),
        ...all.flatMap((i: any) => i.lines).filter((l: any) => l.adjusts_invoice_id === october.id),
      ].reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
      t.ok(octTotal.eq('11.5'), 'October in all: 1,300 calls = 1,000 × 0.01 + 300 × 0.005 = 11.50');
    },
  );
});
