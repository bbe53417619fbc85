import t from 'tap';
import { billingWorld, type BillingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * Issue 31, drafts during the grace period (BILLING_DRAFTS, services/domain/billing/drafts.ts): October's invoice
 * is a draft from the end of October until BILLING_GRACE_SECONDS (1 h) later — late usage lands in it, an
 * operator adds one-off lines or finalizes it early — and the run after the grace period finalizes it: re-priced,
 * numbered, charged. Only finalized invoices carry numbers; drafts are neither charged, credited nor voided.
 */
t.test('drafts during the grace period', async (t) => {
  const w = await billingWorld(t, { BILLING_DRAFTS: 'true', BILLING_GRACE_SECONDS: '3600' });
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const plan = await w.product('Plan', 10, 'USD');
  const callsP = await w.product('Calls', 0.01, 'USD', 'metered');

  /** An account with a card, a calls meter and a subscription billed from October 2026. */
  const customer = async (): Promise<{ a: TestAccount; sub: string; meter: string }> => {
    const a = await createTestAccount(w.api.infra);
    await w.card(a);
    const meter = await w.meter(a, 'calls', 'calls', 'counter', 'sum');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: callsP, meter_id: meter }],
    });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    return { a, sub: sub.id, meter };
  };
  const octoberOf = async (a: TestAccount, sub: string) =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
      (i: any) => i.subscription_id === sub && i.period_start === '2026-10-01',
    );
  const eventsOf = async (invoiceId: string) =>
    (
      await pg.query(`SELECT type FROM outbox_events WHERE data->>'invoice_id' = $1 ORDER BY type`, [invoiceId])
    ).rows.map((r) => r.type);
  const usageShows = (a: TestAccount, meter: string, total: number) =>
    waitUntil(
      async () =>
        (
          await w.made(
            a.tokens.read,
            'GET',
            `/v1/meters/${meter}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
          )
        ).value === total,
      `October at ${total}`,
    );
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);

  const one = await customer();
  await w.usage(one.a, one.meter, [{ value: 100, timestamp: '2026-10-20T00:00:00Z' }]);
  let draft: any;

  await t.test('at the end of the period: a draft, unnumbered, not charged, no event', async (t) => {
    const run = await w.run('2026-11-01T00:10:00Z');
    t.equal(run.code, 0, run.stderr);
    draft = await octoberOf(one.a, one.sub);
    t.match(draft, { status: 'draft', number: null, amount: 11, amount_due: 11, attempt_count: 0 });
    t.same(
      draft.lines.map((l: any) => [l.type, l.quantity, l.amount]),
      [
        ['flat', 1, 10],
        ['usage', 100, 1],
      ],
      '10 + 100 × 0.01',
    );
    t.equal(await w.charges(draft.id), 0, 'nothing charged');
    t.same(await eventsOf(draft.id), [], 'invoice.created waits for the finalization');
    const drafts = await w.made(one.a.tokens.read, 'GET', '/v1/billing/invoices?status=draft');
    t.same(
      drafts.data.map((i: any) => i.id),
      [draft.id],
      'listed with status=draft',
    );
  });

  await t.test('while draft: one-off lines (operators only), late usage lands in it', async (t) => {
    const fee = await call(admin, 'POST', `/v1/billing/invoices/${draft.id}/lines`, {
      description: 'Setup fee',
      amount: 25,
    });
    t.equal(fee.status, 200, JSON.stringify(fee.body));
    t.match(fee.body, { status: 'draft', amount: 36 });
    const seats = await call(admin, 'POST', `/v1/billing/invoices/${draft.id}/lines`, {
      description: 'Extra seats',
      quantity: 3,
      unit_price: 0.333,
    });
    t.equal(seats.status, 200, JSON.stringify(seats.body));
    t.same(
      seats.body.lines.slice(2).map((l: any) => [l.type, l.description, l.quantity, l.unit_price, l.amount]),
      [
        ['one_off', 'Setup fee', 1, 25, 25],
        ['one_off', 'Extra seats', 3, 0.333, 1],
      ],
      '3 × 0.333 = 0.999 → 1.00',
    );
    t.equal(seats.body.amount, 37, 'amount = Σ lines: 10 + 1 + 25 + 1');

    for (const [body, field] of [
      [{ description: 'x', amount: 0.001 }, 'amount'],
      [{ description: 'x', amount: 1, quantity: 1, unit_price: 1 }, 'amount'],
      [{ description: 'x', quantity: 2 }, 'unit_price'],
      [{ description: ' ', amount: 1 }, 'description'],
    ] as const) {
      const r = await call(admin, 'POST', `/v1/billing/invoices/${draft.id}/lines`, body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(
        r.body.errors?.some((e: any) => e.field === field),
        `${JSON.stringify(body)} → 422 naming ${field} (${JSON.stringify(r.body.errors)})`,
      );
    }
    for (const token of [one.a.tokens.read, one.a.tokens.write, one.a.tokens.admin]) {
      t.equal(
        (await call(token, 'POST', `/v1/billing/invoices/${draft.id}/lines`, { description: 'x', amount: 1 })).status,
        403,
        'a customer adds no line',
      );
      t.equal(
        (await call(token, 'POST', `/v1/billing/invoices/${draft.id}/finalize`)).status,
        403,
        'a customer finalizes nothing',
      );
    }
    const refused = [
      await call(admin, 'POST', `/v1/billing/invoices/${draft.id}/credit-notes`, { amount: 1, reason: 'x' }),
      await call(one.a.tokens.write, 'POST', `/v1/billing/invoices/${draft.id}/pay`),
      await call(admin, 'POST', `/v1/billing/invoices/${draft.id}/void`),
    ];
    t.same(
      refused.map((r) => [r.status, r.body.code]),
      [
        [409, 'invoice_draft'],
        [409, 'invoice_draft'],
        [409, 'invoice_draft'],
      ],
      'a draft is not credited, paid or voided',
    );
    t.equal(await w.charges(draft.id), 0, 'still nothing charged');

    // 50 October calls arriving during the grace period.
    await w.usage(one.a, one.meter, [{ value: 50, timestamp: '2026-10-31T23:00:00Z' }]);
    await usageShows(one.a, one.meter, 150);
    const inGrace = await w.run('2026-11-01T00:59:59.999Z');
    t.equal(inGrace.code, 0, inGrace.stderr);
    t.match(
      await octoberOf(one.a, one.sub),
      { status: 'draft', number: null },
      'still a draft inside the grace period',
    );
  });

  let finalNumber = '';
  await t.test('the grace period over: the run finalizes it — re-priced, numbered, charged', async (t) => {
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
    const inv = await octoberOf(one.a, one.sub);
    t.same(
      inv.lines.map((l: any) => [l.type, l.quantity, l.amount]),
      [
        ['flat', 1, 10],
        ['usage', 150, 1.5],
        ['one_off', 1, 25],
        ['one_off', 3, 1],
      ],
      'the late 50 calls in the usage line itself (no adjustment), the one-off lines kept',
    );
    t.match(inv, { status: 'paid', amount: 37.5, created_at: '2026-11-01T01:00:00.000Z', attempt_count: 1 });
    t.match(inv.number, /^ML-2026-\d{6}$/, `numbered (${inv.number})`);
    finalNumber = inv.number;
    t.equal(await w.charges(inv.id), 1, 'charged once');
    t.same(await eventsOf(inv.id), ['invoice.created', 'invoice.paid'], 'issued once, paid once');
    const again = await w.run('2026-11-01T02:00:00Z');
    t.same(again.json.invoices, [], 'finalized once');
    t.equal(await w.charges(inv.id), 1, 'still one charge');
  });

  await t.test(
    'finalize early; a finalized invoice is final (409); another deployment’s is unknown (404)',
    async (t) => {
      const two = await customer();
      const run = await w.run('2026-11-01T00:20:00Z');
      t.equal(run.code, 0, run.stderr);
      const d = await octoberOf(two.a, two.sub);
      t.match(d, { status: 'draft', number: null, amount: 10 });
      const fin = await call(admin, 'POST', `/v1/billing/invoices/${d.id}/finalize`);
      t.equal(fin.status, 200, JSON.stringify(fin.body));
      t.match(fin.body, { status: 'open', amount: 10, next_payment_attempt_at: fin.body.created_at });
      t.equal(
        Number(fin.body.number.slice('ML-2026-'.length)),
        Number(finalNumber.slice('ML-2026-'.length)) + 1,
        'the next number of the series',
      );
      for (const [path, body] of [
        ['finalize', undefined],
        ['lines', { description: 'late fee', amount: 5 }],
      ] as const) {
        const r = await call(admin, 'POST', `/v1/billing/invoices/${d.id}/${path}`, body);
        t.same([r.status, r.body.code], [409, 'invoice_finalized'], `${path} on a finalized invoice`);
      }
      // The billing role's next pass charges it, as every new invoice (finalized at the api's real time: a run now).
      const pay = await w.run(new Date(Date.now() + 1000).toISOString());
      t.equal(pay.code, 0, pay.stderr);
      t.match(await octoberOf(two.a, two.sub), { status: 'paid', attempt_count: 1 });
      t.equal(await w.charges(d.id), 1);

      const other: BillingWorld = await billingWorld(t, { BILLING_DRAFTS: 'true' });
      for (const path of ['finalize', 'lines']) {
        const r = await callJson(
          other.api.url,
          other.operator.tokens.admin,
          'POST',
          `/v1/billing/invoices/${d.id}/${path}`,
          path === 'lines' ? { description: 'x', amount: 1 } : undefined,
        );
        t.equal(r.status, 404, `${path}: another deployment's invoice is not found`);
      }
      t.equal((await call(admin, 'POST', '/v1/billing/invoices/inv_nope/finalize')).status, 404);
    },
  );

  await t.test('a one-off line is in the subtotal and taxed at the customer’s rates', async (t) => {
    // Issue 41 item 7: flat 100 EUR at 20 % plus a one-off 50 → subtotal 150, tax 30, amount 180 (was 100, 20, 170).
    await w.made(admin, 'POST', '/v1/tax_rates', { name: 'TVA', percentage: 20, country: 'FR', inclusive: false });
    const plan = await w.product('Plan (FR)', 100, 'EUR');
    const cust = await w.made(admin, 'POST', '/v1/customers', {
      name: 'Setup SAS',
      external_id: 'setup-sas',
      address: { line1: '1 Rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' },
    });
    const sub = await w.made(admin, 'POST', '/v1/subscriptions', {
      customer_id: cust.id,
      items: [{ product_id: plan }],
    });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    t.equal((await w.run('2026-11-01T00:30:00Z')).code, 0);
    const list = await w.made(admin, 'GET', `/v1/billing/invoices?customer_id=${cust.id}&per_page=100`);
    const d = list.data.find((i: any) => i.subscription_id === sub.id);
    t.match(d, { status: 'draft', subtotal: 100, tax: 20, amount: 120 });
    const fee = await call(admin, 'POST', `/v1/billing/invoices/${d.id}/lines`, {
      description: 'Setup fee',
      amount: 50,
    });
    t.equal(fee.status, 200, JSON.stringify(fee.body));
    t.match(
      fee.body,
      { status: 'draft', subtotal: 150, tax: 20, amount: 170 },
      'in the subtotal; taxed at finalization',
    );
    const fin = await call(admin, 'POST', `/v1/billing/invoices/${d.id}/finalize`);
    t.equal(fin.status, 200, JSON.stringify(fin.body));
    t.match(fin.body, { status: 'open', subtotal: 150, tax: 30, amount: 180 });
    t.same(
      fin.body.lines.map((l: any) => [l.type, l.amount, l.description]),
      [
        ['flat', 100, 'Plan (FR)'],
        ['one_off', 50, 'Setup fee'],
        ['tax', 30, 'TVA 20 % on 150.00'],
      ],
    );
  });

  await t.test('numbers only on finalized invoices, 1…N without a gap', async (t) => {
    const rows = (await pg.query(`SELECT status, number::text AS number FROM invoices ORDER BY number`)).rows;
    t.ok(
      rows.every((r) => (r.status === 'draft') === (r.number === null)),
      'drafts unnumbered, every other numbered',
    );
    const numbers = rows.filter((r) => r.number !== null).map((r) => Number(r.number));
    t.same(
      numbers,
      numbers.map((_, i) => i + 1),
      '1…N',
    );
  });
});
