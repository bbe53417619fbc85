import t from 'tap';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { billingDay } from '../fixtures/calendar.js';

/**
 * Payments and dunning (docs/design.md §8 Invoice, §9 events): the first attempt at creation, retries 1, 3 and 5
 * days after creation, then uncollectible; a manual attempt through POST …/pay; events exactly once in the
 * outbox with their docs/design.md §9 data; charges counted in the sandbox processor's own ledger.
 */
t.test('payments, dunning, pay and upcoming', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const plan = await w.product('Team plan', 20, 'USD');
  // Every event's data also names the invoice's customer (docs/design.md §9): checked here, then left out.
  const eventsOf = async (invoiceId: string) => {
    const { rows } = await pg.query(
      `SELECT e.type, e.data - 'customer_id' AS data, e.data->>'customer_id' = a.customer_id AS names_customer
         FROM outbox_events e JOIN accounts a ON a.id = e.account_id
        WHERE e.data->>'invoice_id' = $1 ORDER BY e.seq`,
      [invoiceId],
    );
    t.ok(
      rows.every((r) => r.names_customer),
      `${invoiceId}: every event names its customer`,
    );
    return rows.map(({ type, data }) => ({ type, data })) as { type: string; data: any }[];
  };
  const invoiceOf = async (token: string, subscriptionId: string) => {
    const list = await w.made(token, 'GET', '/v1/billing/invoices?per_page=100');
    return list.data.filter((i: any) => i.subscription_id === subscriptionId);
  };

  await t.test(
    'dunning walk on 4000000000009995: +1, +3, +5 days, then uncollectible; a new card and pay → paid',
    async (t) => {
      const poor = await createTestAccount(w.api.infra);
      const failingCard = await w.card(poor, '4000000000009995');
      const sub = await w.made(poor.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
      const created = await w.run(billingDay(0));
      t.equal(created.code, 0, created.stderr);
      const [inv] = await invoiceOf(poor.tokens.read, sub.id);
      t.same(created.json.payments, [
        { invoice_id: inv.id, attempt: 1, outcome: 'failed', failure_code: 'insufficient_funds' },
      ]);
      t.match(inv, {
        status: 'open',
        amount: 20,
        attempt_count: 1,
        created_at: billingDay(0),
        next_payment_attempt_at: billingDay(1),
        last_payment_error: { code: 'insufficient_funds', message: 'The card has insufficient funds.' },
        paid_at: null,
      });
      const steps: [string, number, string | null, string][] = [
        [billingDay(1), 2, billingDay(3), 'open'],
        [billingDay(3), 3, billingDay(5), 'open'],
        [billingDay(5), 4, null, 'uncollectible'],
      ];
      for (const [now, attempt, next, status] of steps) {
        const early = await w.run(new Date(Date.parse(now) - 1000).toISOString());
        t.same(early.json.payments, [], `nothing due a second before ${now}`);
        const r = await w.run(now);
        t.same(
          r.json.payments,
          [{ invoice_id: inv.id, attempt, outcome: 'failed', failure_code: 'insufficient_funds' }],
          `attempt ${attempt} at ${now}`,
        );
        const cur = await w.made(poor.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`);
        t.match(cur, { status, attempt_count: attempt, next_payment_attempt_at: next });
      }
      const after = await w.run(billingDay(6));
      t.same(work(after.json), { invoices: [], payments: [] }, '+6 days: nothing more is attempted');
      t.equal(await w.charges(inv.id), 4, 'four charges reached the processor, one per attempt');

      // A manual attempt with the same failing card: 402, the invoice unchanged but for attempt_count.
      const declined = await callJson(w.api.url, poor.tokens.write, 'POST', `/v1/billing/invoices/${inv.id}/pay`);
      t.equal(declined.status, 402);
      t.equal(declined.body.code, 'insufficient_funds');
      t.match(await w.made(poor.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`), {
        status: 'uncollectible',
        attempt_count: 5,
        next_payment_attempt_at: null,
        paid_at: null,
      });

      const goodCard = await w.card(poor, '4242424242424242');
      await w.made(poor.tokens.write, 'PATCH', `/v1/billing/payment-methods/${goodCard}/default`);
      const paid = await callJson(w.api.url, poor.tokens.write, 'POST', `/v1/billing/invoices/${inv.id}/pay`);
      t.equal(paid.status, 200, JSON.stringify(paid.body));
      t.match(paid.body, {
        id: inv.id,
        status: 'paid',
        attempt_count: 6,
        next_payment_attempt_at: null,
        last_payment_error: null,
        paid_at: /^\d{4}-/,
      });
      t.equal(await w.charges(inv.id), 6);
      const again = await callJson(w.api.url, poor.tokens.write, 'POST', `/v1/billing/invoices/${inv.id}/pay`);
      t.equal(again.status, 409, 'pay on a paid invoice');
      t.equal(again.body.code, 'invoice_paid');
      t.equal(await w.charges(inv.id), 6, 'no charge for the refused request');

      const events = await eventsOf(inv.id);
      const failed = (attempt_count: number, pm: string) => ({
        type: 'payment.failed',
        data: {
          invoice_id: inv.id,
          amount: 20,
          currency: 'USD',
          payment_method_id: pm,
          failure_code: 'insufficient_funds',
          attempt_count,
        },
      });
      t.same(
        events,
        [
          {
            type: 'invoice.created',
            data: { invoice_id: inv.id, amount: 20, currency: 'USD', hosted_invoice_url: inv.hosted_invoice_url },
          },
          failed(1, failingCard),
          failed(2, failingCard),
          failed(3, failingCard),
          failed(4, failingCard),
          failed(5, failingCard),
          {
            type: 'invoice.paid',
            data: {
              invoice_id: inv.id,
              amount: 20,
              currency: 'USD',
              status: 'paid',
              previous_attributes: { status: 'uncollectible' },
            },
          },
        ],
        'each event exactly once, with docs/design.md §9 data',
      );
    },
  );

  await t.test(
    'a card that pays: paid at creation, invoice.created and invoice.paid once; no method → no_payment_method',
    async (t) => {
      const good = await createTestAccount(w.api.infra);
      const card = await w.card(good);
      const none = await createTestAccount(w.api.infra);
      const goodSub = await w.made(good.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
      const noneSub = await w.made(none.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
      // A metered-only subscription without usage: amount 0, paid without a charge.
      const calls = await w.product('Calls', 0.01, 'USD', 'metered');
      const meter = await w.meter(good, 'calls', 'calls', 'counter', 'sum');
      const zeroSub = await w.made(good.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: calls, meter_id: meter }],
      });
      const r = await w.run(billingDay(0));
      t.equal(r.code, 0, r.stderr);
      const [paid] = await invoiceOf(good.tokens.read, goodSub.id);
      t.match(paid, {
        status: 'paid',
        attempt_count: 1,
        paid_at: billingDay(0),
        next_payment_attempt_at: null,
      });
      t.equal(await w.charges(paid.id), 1);
      t.same(await eventsOf(paid.id), [
        {
          type: 'invoice.created',
          data: { invoice_id: paid.id, amount: 20, currency: 'USD', hosted_invoice_url: paid.hosted_invoice_url },
        },
        {
          type: 'invoice.paid',
          data: {
            invoice_id: paid.id,
            amount: 20,
            currency: 'USD',
            status: 'paid',
            previous_attributes: { status: 'open' },
          },
        },
      ]);
      const charge = (
        await pg.query('SELECT amount::text, currency, status FROM sandbox_charges WHERE idempotency_key = $1', [
          `${paid.id}:1`,
        ])
      ).rows[0];
      t.same(charge, { amount: '20', currency: 'USD', status: 'succeeded' }, 'charged once, key <invoice id>:1');
      t.ok(card);

      const [zero] = await invoiceOf(good.tokens.read, zeroSub.id);
      t.match(zero, { status: 'paid', amount: 0, attempt_count: 0 });
      t.equal(await w.charges(zero.id), 0, 'an amount of 0 is never charged');
      t.same(
        (await eventsOf(zero.id)).map((e) => e.type),
        ['invoice.created', 'invoice.paid'],
      );

      const [unpaid] = await invoiceOf(none.tokens.read, noneSub.id);
      t.match(unpaid, {
        status: 'open',
        attempt_count: 1,
        last_payment_error: { code: 'no_payment_method' },
        next_payment_attempt_at: billingDay(1),
      });
      t.equal(await w.charges(unpaid.id), 0);
      t.same((await eventsOf(unpaid.id))[1], {
        type: 'payment.failed',
        data: {
          invoice_id: unpaid.id,
          amount: 20,
          currency: 'USD',
          payment_method_id: null,
          failure_code: 'no_payment_method',
          attempt_count: 1,
        },
      });
      const noCard = await callJson(w.api.url, none.tokens.write, 'POST', `/v1/billing/invoices/${unpaid.id}/pay`);
      t.equal(noCard.status, 402);
      t.equal(noCard.body.code, 'no_payment_method');
      const foreign = await callJson(w.api.url, good.tokens.write, 'POST', `/v1/billing/invoices/${unpaid.id}/pay`);
      t.equal(foreign.status, 404, "another account's invoice");
      t.equal(
        (await callJson(w.api.url, good.tokens.write, 'POST', '/v1/billing/invoices/inv_doesnotexist/pay')).status,
        404,
      );
    },
  );

  await t.test('upcoming invoice: the current period priced with the usage so far, nothing stored', async (t) => {
    const u = await createTestAccount(w.api.infra);
    const other = await createTestAccount(w.api.infra);
    const callsP = await w.product('API calls', 0.001, 'USD', 'metered');
    const meter = await w.meter(u, 'API calls', 'requests', 'counter', 'sum');
    const sub = await w.made(u.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: callsP, meter_id: meter }],
    });
    const ts = new Date(Date.now() - 60_000).toISOString();
    await w.usage(
      u,
      meter,
      [1000, 1000, 1005].map((value) => ({ value, timestamp: ts })),
    );
    const r = await callJson(
      w.api.url,
      u.tokens.read,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`,
    );
    t.equal(r.status, 200, JSON.stringify(r.body));
    const month = new Date().toISOString().slice(0, 7);
    t.match(r.body, {
      id: null,
      status: 'draft',
      subscription_id: sub.id,
      customer_id: u.customerId,
      currency: 'USD',
      period_start: `${month}-01`,
      attempt_count: 0,
      paid_at: null,
    });
    t.same(
      r.body.lines.map((l: any) => [l.description, l.quantity, l.amount]),
      [
        ['Team plan', 1, 20],
        ['API calls — 3,005 requests', 3005, 3.01],
      ],
      '3,005 × 0.001 = 3.005 → 3.01',
    );
    t.equal(r.body.amount, 23.01);
    t.same((await w.made(u.tokens.read, 'GET', '/v1/billing/invoices')).data, [], 'nothing stored');

    const foreign = await callJson(
      w.api.url,
      other.tokens.read,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`,
    );
    t.equal(foreign.status, 404, "another account's subscription");
    const missing = await callJson(w.api.url, u.tokens.read, 'GET', '/v1/billing/invoices/upcoming');
    t.equal(missing.status, 422);
    t.equal(missing.body.errors[0].field, 'subscription_id');
    await w.made(u.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, { status: 'canceled' });
    const canceled = await callJson(
      w.api.url,
      u.tokens.read,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`,
    );
    t.equal(canceled.status, 409);
    t.equal(canceled.body.code, 'subscription_canceled');
  });
});
