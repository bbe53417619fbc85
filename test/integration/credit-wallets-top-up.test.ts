import t from 'tap';
import type Stripe from 'stripe';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { stripeBillingWorld } from '../fixtures/stripe.js';
import { signatureHeader } from '../stripe-sim/webhooks.js';
import { billingDay } from '../fixtures/calendar.js';

/**
 * Buying prepaid credit (issue 44 item 4, docs/credits.md "Prepaid credit") through the Stripe simulator, with the
 * real api, `meterline billing run` and Postgres: POST /v1/credit_top_ups issues a top-up invoice and charges it;
 * the credit is granted when the invoice is paid, exactly once — whether the charge's answer, a redelivered webhook
 * or the billing run's reconciliation says so; a declined charge grants nothing and says so.
 */
const NOW = billingDay(0);

t.test('credit top-ups through Stripe', async (t) => {
  const { sim, w, webhookUrl } = await stripeBillingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;

  const addCard = (a: TestAccount, pm: string) =>
    w.made(a.tokens.write, 'POST', '/v1/billing/payment-methods', { type: 'card', payment_method: pm });
  const buy = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${w.api.url}/v1/credit_top_ups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const grantsOf = async (accountId: string) =>
    (
      await pg.query(
        `SELECT id, amount::text AS amount, remaining::text AS remaining, currency, source_invoice_id FROM credit_grants
          WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
      )
    ).rows;
  const creditEvents = async (accountId: string) =>
    (
      await pg.query(
        `SELECT type, data FROM outbox_events WHERE account_id = $1 AND type LIKE 'credit.%' ORDER BY seq`,
        [accountId],
      )
    ).rows;
  const intentsOf = async (invoiceId: string) =>
    (await sim.objects<Stripe.PaymentIntent>('payment_intent')).filter((p) => p.metadata.invoice_id === invoiceId);
  const deliver = (payload: string) =>
    fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': signatureHeader(sim.webhookSecret, payload),
      },
      body: payload,
    });
  const run = async (logLevel = 'error') => {
    const r = await w.run(NOW, { ...sim.env, LOG_LEVEL: logLevel });
    t.equal(r.code, 0, r.stderr);
    return r.json;
  };

  await t.test('who may buy: the operator for any customer; a customer only when portal_settings allow', async (t) => {
    const a = await createTestAccount(w.api.infra);
    await addCard(a, 'pm_card_visa');
    const refused = await buy(a.tokens.write, { amount: 10, currency: 'USD' });
    t.equal(refused.status, 403);
    t.equal(refused.body.code, 'customer_cannot_buy_credit');
    const other = await createTestAccount(w.api.infra);
    const forOther = await buy(a.tokens.write, { customer_id: other.customerId, amount: 10, currency: 'USD' });
    t.equal(forOther.status, 403, 'a customer never buys for another');
    t.equal((await grantsOf(a.accountId)).length, 0);
    await w.made(admin, 'PATCH', '/v1/portal_settings', { customer_can_buy_credit: true });
    const own = await buy(a.tokens.write, { amount: 10, currency: 'USD' });
    t.equal(own.status, 201, JSON.stringify(own.body));
    t.equal(own.body.status, 'paid');
    // Another customer's top-up is "not found", like an unknown id.
    const peek = await callJson(w.api.url, other.tokens.read, 'GET', `/v1/credit_top_ups/${own.body.id}`);
    t.equal(peek.status, 404);
    const mine = await callJson(w.api.url, a.tokens.read, 'GET', `/v1/credit_top_ups/${own.body.id}`);
    t.equal(mine.status, 200);
    t.equal(mine.body.grant_id, own.body.grant_id);
  });

  await t.test('bad input is a precise problem and writes nothing', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const cases: [unknown, string][] = [
      [{ customer_id: a.customerId, amount: 0, currency: 'USD' }, 'amount'],
      [{ customer_id: a.customerId, amount: 10.005, currency: 'USD' }, 'amount'],
      [{ customer_id: a.customerId, amount: 10.5, currency: 'JPY' }, 'amount'],
      [{ customer_id: a.customerId, amount: 10, currency: 'XXQ' }, 'currency'],
      [{ customer_id: a.customerId, amount: 10 }, 'currency'],
    ];
    for (const [body, field] of cases) {
      const r = await buy(admin, body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.ok(
        r.body.errors?.some((e: any) => e.field === field),
        `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const noCard = await buy(admin, { customer_id: a.customerId, amount: 10, currency: 'USD' });
    t.equal(noCard.status, 402);
    t.equal(noCard.body.code, 'no_payment_method');
    const written = await pg.query(
      `SELECT (SELECT count(*) FROM invoices WHERE account_id = $1)::int AS invoices,
              (SELECT count(*) FROM credit_top_ups WHERE account_id = $1)::int AS top_ups`,
      [a.accountId],
    );
    t.same(written.rows[0], { invoices: 0, top_ups: 0 });
  });

  await t.test('a paid top-up: its own invoice, one grant, once whatever is redelivered', async (t) => {
    const a = await createTestAccount(w.api.infra);
    await addCard(a, 'pm_card_visa');
    await sim.admin('POST', '/_sim/faults', { webhook_duplicate: 3 });
    const r = await buy(
      admin,
      { customer_id: a.customerId, amount: 25.5, currency: 'usd' },
      { 'idempotency-key': 'k1' },
    );
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, {
      customer_id: a.customerId,
      amount: 25.5,
      currency: 'USD',
      status: 'paid',
      trigger: 'manual',
      failure_code: null,
    });
    const inv = await w.made(admin, 'GET', `/v1/billing/invoices/${r.body.invoice_id}`);
    t.match(inv, { reason: 'top_up', subscription_id: null, status: 'paid', amount: 25.5, tax: 0, subtotal: 25.5 });
    t.equal(inv.lines.length, 1);
    t.equal(inv.lines[0].amount, 25.5, 'amount = Σ lines');
    t.match(inv.number, /\d{6}$/, 'numbered like every issued invoice');
    const intents = await intentsOf(inv.id);
    t.equal(intents.length, 1);
    t.equal(intents[0]!.amount, 2550);

    // The payment_intent.succeeded webhook (sent 3 times) and the same events delivered again: no second grant.
    await waitUntil(
      async () => (await pg.query(`SELECT 1 FROM stripe_events WHERE type = 'payment_intent.succeeded'`)).rowCount! > 0,
      'the succeeded webhook',
    );
    const events = (await sim.sdk.events.list({ limit: 100 })).data.filter(
      (e) => (e.data.object as { metadata?: Record<string, string> }).metadata?.invoice_id === inv.id,
    );
    t.ok(events.length > 0);
    for (const e of events) t.equal((await deliver(JSON.stringify(e))).status, 200);
    await sim.admin('POST', '/_sim/faults', { webhook_duplicate: 0 });
    // The same request again (Idempotency-Key): the same top-up, nothing charged again.
    const again = await buy(
      admin,
      { customer_id: a.customerId, amount: 25.5, currency: 'usd' },
      { 'idempotency-key': 'k1' },
    );
    t.equal(again.body.id, r.body.id);
    await run();
    t.equal((await intentsOf(inv.id)).length, 1, 'one charge');
    const grants = await grantsOf(a.accountId);
    t.same(grants, [
      { id: r.body.grant_id, amount: '25.5', remaining: '25.5', currency: 'USD', source_invoice_id: inv.id },
    ]);
    const list = await w.made(a.tokens.read, 'GET', '/v1/billing/credits');
    t.same(list.balance, [{ currency: 'USD', amount: 25.5 }]);
    const granted = (await creditEvents(a.accountId)).filter((e) => e.type === 'credit.granted');
    t.equal(granted.length, 1, 'credit.granted once');
    t.match(granted[0]!.data, {
      grant_id: r.body.grant_id,
      amount: 25.5,
      currency: 'USD',
      source: 'top_up',
      invoice_id: inv.id,
      top_up_id: r.body.id,
    });
  });

  await t.test('a declined charge: no grant, credit.top_up.failed, the invoice uncollectible', async (t) => {
    const a = await createTestAccount(w.api.infra);
    await addCard(a, 'pm_card_chargeCustomerFail');
    const r = await buy(admin, { customer_id: a.customerId, amount: 40, currency: 'USD' });
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, { status: 'failed', failure_code: 'card_declined', grant_id: null });
    const inv = await w.made(admin, 'GET', `/v1/billing/invoices/${r.body.invoice_id}`);
    t.match(inv, { status: 'uncollectible', next_payment_attempt_at: null });
    // The run's dunning never retries it: the customer did not ask twice.
    await run();
    t.equal((await intentsOf(inv.id)).length, 1);
    t.same(await grantsOf(a.accountId), []);
    const events = await creditEvents(a.accountId);
    t.same(
      events.map((e) => e.type),
      ['credit.top_up.failed'],
    );
    t.match(events[0]!.data, {
      top_up_id: r.body.id,
      invoice_id: inv.id,
      amount: 40,
      currency: 'USD',
      failure_code: 'card_declined',
      trigger: 'manual',
    });
    // Paying that invoice later with a good card still grants the credit, once.
    const visa = await addCard(a, 'pm_card_visa');
    await w.made(a.tokens.write, 'PATCH', `/v1/billing/payment-methods/${visa.id}/default`);
    await w.made(a.tokens.write, 'POST', `/v1/billing/invoices/${inv.id}/pay`);
    const after = await w.made(admin, 'GET', `/v1/credit_top_ups/${r.body.id}`);
    t.match(after, { status: 'paid', failure_code: null });
    t.equal((await grantsOf(a.accountId)).length, 1);
  });

  await t.test('a lost answer: pending, then settled by the billing run with one charge and one grant', async (t) => {
    const a = await createTestAccount(w.api.infra);
    await addCard(a, 'pm_card_visa');
    await sim.admin('POST', '/_sim/faults', { lose_response: 5, webhook_drop: 3 });
    const r = await buy(admin, { customer_id: a.customerId, amount: 12, currency: 'USD' });
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, { status: 'pending', grant_id: null });
    t.same(await grantsOf(a.accountId), [], 'nothing granted before the payment is known');
    await sim.admin('POST', '/_sim/faults', { lose_response: 0, webhook_drop: 0 });
    await run();
    await run();
    const after = await w.made(admin, 'GET', `/v1/credit_top_ups/${r.body.id}`);
    t.equal(after.status, 'paid');
    t.equal((await intentsOf(r.body.invoice_id)).length, 1, 'one PaymentIntent');
    const grants = await grantsOf(a.accountId);
    t.equal(grants.length, 1);
    t.equal(grants[0]!.amount, '12');
    t.equal((await creditEvents(a.accountId)).filter((e) => e.type === 'credit.granted').length, 1);
  });
});
