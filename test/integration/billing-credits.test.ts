import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { Decimal } from '../../shared/money/decimal.js';
import { billingDeps } from '../../services/workers/billing-deps.js';
import { closeDuePeriods } from '../../services/domain/billing/close.js';
import { dayIn, dayOf, monthStart } from '../fixtures/calendar.js';

/**
 * Prepaid credits (docs/design.md §8 Credits): granted by an operator, applied at invoice creation oldest-expiring
 * first as a negative `credit` line, a fully covered invoice paid without a charge; the ledger exact and never
 * negative under concurrent billing runs.
 * October, November, December and January stand for last month, this month and the two after (test/fixtures/calendar.ts).
 */
t.test('prepaid credits', async (t) => {
  const w = await billingWorld(t);
  const admin = w.operator.tokens.admin;
  const a = await createTestAccount(w.api.infra, { name: 'Credit Co' });
  await w.card(a);
  const plan = await w.product('Plan', 49.99, 'USD');
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
  await w.backdate(sub.id, dayIn(-1, 5));
  const grant = (body: Record<string, unknown>) =>
    callJson(w.api.url, admin, 'POST', '/v1/billing/credits', {
      account_id: a.accountId,
      currency: 'USD',
      description: 'Welcome credit',
      ...body,
    });
  const invoicesOf = async () =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
      .filter((i: any) => i.subscription_id === sub.id)
      .sort((x: any, y: any) => x.period_start.localeCompare(y.period_start));

  const never = await grant({ amount: 100, description: 'Goodwill' });
  const soon = await grant({ amount: 30, expires_at: dayIn(2, 1) });

  await t.test('granting: operators only, exact amounts in minor units, 422 naming the field', async (t) => {
    t.equal(never.status, 201);
    t.equal(never.headers.get('location'), `/v1/billing/credits/${never.body.id}`);
    t.match(never.body, {
      account_id: a.accountId,
      amount: 100,
      remaining: 100,
      currency: 'USD',
      expires_at: null,
      description: 'Goodwill',
    });
    t.match(soon.body, { amount: 30, expires_at: dayIn(2, 1) });
    const self = await callJson(w.api.url, a.tokens.admin, 'POST', '/v1/billing/credits', {
      account_id: a.accountId,
      amount: 1000,
      currency: 'USD',
      description: 'free money',
    });
    t.equal(self.status, 403, 'a customer cannot grant itself credit');
    for (const [body, field] of [
      [{ amount: 0 }, 'amount'],
      [{ amount: -5 }, 'amount'],
      [{ amount: 1.005 }, 'amount'],
      [{ amount: 1.5, currency: 'JPY' }, 'amount'],
      [{ amount: 1, currency: 'XYZ' }, 'currency'],
      [{ amount: 1, expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ amount: 1, account_id: 'acct_doesnotexist0000000000' }, 'account_id'],
      [{ amount: 1, description: '  ' }, 'description'],
    ] as [Record<string, unknown>, string][]) {
      const r = await grant(body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(
        r.body.errors?.some((e: any) => e.field === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const list = await w.made(a.tokens.read, 'GET', '/v1/billing/credits');
    t.same(list.data.map((g: any) => g.id).sort(), [never.body.id, soon.body.id].sort());
    t.same(list.balance, [{ currency: 'USD', amount: 130 }]);
  });

  await t.test('the upcoming invoice shows the credit it would take', async (t) => {
    const up = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.equal(up.amount, 0);
    t.match(up.lines.at(-1), {
      type: 'credit',
      amount: -49.99,
      description: `Prepaid credit applied: 30 of ${soon.body.id} (expires ${dayOf(monthStart(2))}), 19.99 of ${never.body.id}`,
    });
    t.same(
      (await w.made(a.tokens.read, 'GET', '/v1/billing/credits')).balance,
      [{ currency: 'USD', amount: 130 }],
      'nothing spent by a preview',
    );
  });

  await t.test(
    'fully covered (oldest-expiring first) → paid without a charge; then partly covered → the rest charged once',
    async (t) => {
      const oct = await w.run(dayIn(0, 1, 1));
      t.equal(oct.code, 0, oct.stderr);
      const [october] = await invoicesOf();
      t.same(october.lines, [
        {
          type: 'flat',
          product_id: plan,
          meter_id: null,
          description: 'Plan',
          quantity: 1,
          unit_price: 49.99,
          amount: 49.99,
        },
        {
          type: 'credit',
          product_id: null,
          meter_id: null,
          description: `Prepaid credit applied: 30 of ${soon.body.id} (expires ${dayOf(monthStart(2))}), 19.99 of ${never.body.id}`,
          quantity: 1,
          unit_price: -49.99,
          amount: -49.99,
        },
      ]);
      t.match(october, { amount: 0, status: 'paid', attempt_count: 0 });
      t.equal(await w.charges(october.id), 0, 'no charge');
      await w.run(dayIn(1, 1, 1)); // November: 49.99 of the remaining 80.01
      await w.run(dayIn(2, 1, 1)); // December: the last 30.02 of credit, 19.97 charged
      const [, november, december] = await invoicesOf();
      t.match(november, { amount: 0, status: 'paid' });
      t.same(
        december.lines.map((l: any) => [l.type, l.amount]),
        [
          ['flat', 49.99],
          ['credit', -30.02],
        ],
      );
      t.match(december, { amount: 19.97, status: 'paid', attempt_count: 1 });
      t.equal(await w.charges(december.id), 1, 'the rest charged once');
      const list = await w.made(a.tokens.read, 'GET', '/v1/billing/credits');
      t.same(list.balance, [], 'all credit spent');
      t.same(
        list.data.map((g: any) => g.remaining),
        [0, 0],
      );
      const again = await w.run(dayIn(2, 1, 1));
      t.same(work(again.json), { invoices: [], payments: [] }, 'a re-run spends nothing more');
    },
  );

  await t.test('concurrent closes spend a grant exactly, never below 0', async (t) => {
    const b = await createTestAccount(w.api.infra, { name: 'Busy Co' });
    const cheap = await w.product('Seat', 10, 'USD');
    const subs: string[] = [];
    for (let i = 0; i < 24; i++)
      subs.push((await w.made(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: cheap }] })).id);
    await w.api.infra.pg.query(
      `UPDATE subscriptions SET created_at = '2026-10-05', billing_period_start = '2026-10-01' WHERE id = ANY($1)`,
      [subs],
    );
    const g = await grant({ account_id: b.accountId, amount: 95.5 });
    t.equal(g.status, 201);
    const deps = billingDeps(w.api.infra);
    t.teardown(() => deps.linesPool.destroy());
    // Four closers at once, three subscriptions per transaction: they interleave on the same grant.
    const closed = (
      await Promise.all(
        [1, 2, 3, 4].map(() => closeDuePeriods(deps, new Date('2026-11-01T01:00:00Z'), { batchSize: 3 })),
      )
    ).flat();
    t.equal(closed.length, 24, 'each period closed once');
    const invoices = (await w.made(b.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data;
    const credited = invoices.flatMap((i: any) => i.lines).filter((l: any) => l.type === 'credit');
    const applied = credited.reduce((s: Decimal, l: any) => s.minus(String(l.amount)), new Decimal(0));
    t.ok(applied.eq('95.5'), `exactly the grant applied (${applied})`);
    t.equal(invoices.filter((i: any) => i.amount === 0).length, 9, '9 invoices fully covered (90), one partly (5.50)');
    t.ok(
      invoices.some((i: any) => i.amount === 4.5),
      'the partly covered one owes 4.50',
    );
    for (const inv of invoices) {
      const sum = inv.lines.reduce((s: Decimal, l: any) => s.plus(String(l.amount)), new Decimal(0));
      t.ok(sum.eq(String(inv.amount)), `${inv.id}: amount = Σ lines`);
    }
    const ledger = (
      await w.api.infra.pg.query(
        'SELECT remaining::text AS r, (SELECT sum(amount)::text FROM credit_applications WHERE grant_id = $1) AS used FROM credit_grants WHERE id = $1',
        [g.body.id],
      )
    ).rows[0];
    t.ok(
      new Decimal(ledger.r).isZero() && new Decimal(ledger.used).eq('95.5'),
      `grant spent to 0, ledger 95.5 (${JSON.stringify(ledger)})`,
    );
  });
});
