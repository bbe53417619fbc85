import t from 'tap';
import type Stripe from 'stripe';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { stripeBillingWorld } from '../fixtures/stripe.js';
import { signatureHeader } from '../stripe-sim/webhooks.js';
import { billingDay } from '../fixtures/calendar.js';

/**
 * PAYMENT_PROCESSOR=stripe against the Stripe simulator (test/stripe-sim/, through the official SDK), with the real
 * api, `meterline billing run`, Postgres, NATS and ClickHouse: cards saved by PaymentMethod id (raw cards refused),
 * one Stripe Customer per account, each attempt one off-session PaymentIntent — paid, declined into dunning,
 * requires_action, or lost and reconciled with exactly one charge — signed webhooks applied once in any order,
 * refunds and disputes.
 */
const NOW = billingDay(0);

t.test('billing through Stripe', async (t) => {
  const { sim, w, webhookUrl } = await stripeBillingWorld(t);
  const pg = w.api.infra.pg;
  const plan = await w.product('Team plan', 20, 'USD');

  const addCard = (a: TestAccount, pm: string) =>
    callJson(w.api.url, a.tokens.write, 'POST', '/v1/billing/payment-methods', { type: 'card', payment_method: pm });
  const subscribe = (a: TestAccount) =>
    w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
  // The run logs errors on stdout, where its JSON result goes: an unexpected one fails the test; the lost answer
  // (logged as an error) is expected in one test, which turns the logs off.
  const run = async (logLevel = 'error', now = NOW) => {
    const r = await w.run(now, { ...sim.env, LOG_LEVEL: logLevel });
    t.equal(r.code, 0, r.stderr);
    return r.json;
  };
  const invoiceOf = async (a: TestAccount, subId: string) =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
      (i: any) => i.subscription_id === subId,
    );
  const intentsOf = async (invoiceId: string) =>
    (await sim.objects<Stripe.PaymentIntent>('payment_intent')).filter((p) => p.metadata.invoice_id === invoiceId);
  const attemptsOf = async (invoiceId: string) =>
    (
      await pg.query(
        'SELECT attempt, status, failure_code, charge_id FROM payment_attempts WHERE invoice_id = $1 ORDER BY attempt',
        [invoiceId],
      )
    ).rows;
  const eventsOf = async (invoiceId: string) =>
    (
      await pg.query(`SELECT type FROM outbox_events WHERE data->>'invoice_id' = $1 ORDER BY seq`, [invoiceId])
    ).rows.map((r) => r.type as string);
  const deliver = (payload: string, signature = signatureHeader(sim.webhookSecret, payload)) =>
    fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body: payload,
    });

  await t.test('raw card details are refused with 422 raw_card_refused naming the hosted card page', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const r = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/billing/payment-methods', {
      type: 'card',
      card: { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' },
    });
    t.equal(r.status, 422);
    t.equal(r.body.code, 'raw_card_refused');
    t.same(
      r.body.errors.map((e: any) => e.field),
      ['card'],
    );
    t.match(r.body.detail, /hosted card page/);
    t.equal(
      (await pg.query('SELECT count(*)::int AS n FROM payment_methods WHERE account_id = $1', [a.accountId])).rows[0].n,
      0,
    );
  });

  let paidInvoice: any;
  let paidAccount: TestAccount;
  await t.test(
    'a card saved by PaymentMethod id, one Stripe Customer, and a charge that pays the invoice once',
    async (t) => {
      const a = (paidAccount = await createTestAccount(w.api.infra));
      const r = await addCard(a, 'pm_card_visa');
      t.equal(r.status, 201, JSON.stringify(r.body));
      t.match(r.body, { type: 'card', card: { brand: 'visa', last4: '4242', exp_month: 12 }, is_default: true });
      t.equal((await addCard(a, 'pm_card_mastercard')).body.card.brand, 'mastercard');
      const customers = (await sim.objects<Stripe.Customer>('customer')).filter(
        (c) => c.metadata.account_id === a.accountId,
      );
      t.equal(customers.length, 1, 'one Stripe Customer for the account, made when first needed');
      const stored = await pg.query('SELECT customer_id FROM stripe_customers WHERE account_id = $1', [a.accountId]);
      t.equal(stored.rows[0].customer_id, customers[0]!.id);
      const declined = await addCard(a, 'pm_card_chargeDeclined');
      t.equal(declined.status, 402);
      t.equal(declined.body.code, 'generic_decline');

      const sub = await subscribe(a);
      // The run or the payment_intent.succeeded webhook, whichever comes first, completes the attempt (the run's
      // own list may then lack it): the state is what counts.
      await run();
      const inv = (paidInvoice = await invoiceOf(a, sub.id));
      t.match(inv, {
        status: 'paid',
        last_payment_error: null,
        payment_attempt_status: 'succeeded',
        dispute_status: null,
      });
      const intents = await intentsOf(inv.id);
      t.equal(intents.length, 1, 'one PaymentIntent');
      t.match(intents[0], {
        status: 'succeeded',
        amount: Math.round(Number(inv.amount) * 100),
        currency: 'usd',
        customer: customers[0]!.id,
        metadata: { invoice_id: inv.id, attempt: '1', meterline_attempt: `${inv.id}:1` },
      });
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'succeeded', charge_id: intents[0]!.id }]);
      // Its payment_intent.succeeded webhook arrives too: it changes nothing more.
      await waitUntil(
        async () =>
          (await pg.query(`SELECT 1 FROM stripe_events WHERE type = 'payment_intent.succeeded'`)).rowCount! > 0,
        'the webhook of the charge',
      );
      t.same(
        (await eventsOf(inv.id)).filter((e) => e !== 'invoice.created'),
        ['invoice.paid'],
      );
    },
  );

  await t.test(
    'insufficient funds: the attempts fail with the decline code, dunning retries, a new card pays',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      t.equal((await addCard(a, 'pm_card_chargeDeclinedInsufficientFunds')).status, 201);
      const sub = await subscribe(a);
      await sim.admin('POST', '/_sim/faults', { webhook_duplicate: 3 });
      await run();
      const inv = await invoiceOf(a, sub.id);
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'failed', failure_code: 'insufficient_funds' }]);
      t.match(inv, {
        status: 'open',
        attempt_count: 1,
        next_payment_attempt_at: billingDay(1),
        last_payment_error: { code: 'insufficient_funds', decline_code: 'insufficient_funds' },
      });
      t.equal((await intentsOf(inv.id))[0]!.status, 'requires_payment_method');
      // Stripe's payment_failed webhook (sent twice here) leaves the failed attempt as it is.
      await waitUntil(
        async () =>
          (await pg.query(`SELECT 1 FROM stripe_events WHERE type = 'payment_intent.payment_failed'`)).rowCount! > 0,
        'the payment_failed webhook',
      );
      t.same(
        (await eventsOf(inv.id)).filter((e) => e === 'payment.failed'),
        ['payment.failed'],
      );
      t.equal(inv.payment_attempt_status, 'failed');

      // Dunning's retry a day after the due date: declined again, the next one planned two days later.
      await run('error', billingDay(1));
      t.match(await attemptsOf(inv.id), [
        { attempt: 1, status: 'failed', failure_code: 'insufficient_funds' },
        { attempt: 2, status: 'failed', failure_code: 'insufficient_funds' },
      ]);
      t.match(await invoiceOf(a, sub.id), {
        status: 'open',
        attempt_count: 2,
        next_payment_attempt_at: billingDay(3),
      });
      // The customer adds a good card and makes it the default: the third attempt pays, once.
      const visa = await addCard(a, 'pm_card_visa');
      t.equal(visa.status, 201);
      await w.made(a.tokens.write, 'PATCH', `/v1/billing/payment-methods/${visa.body.id}/default`);
      await run('error', billingDay(3));
      t.match(await invoiceOf(a, sub.id), { status: 'paid', attempt_count: 3, last_payment_error: null });
      const intents = await intentsOf(inv.id);
      t.same(
        intents.map((p) => p.status).sort(),
        ['requires_payment_method', 'requires_payment_method', 'succeeded'],
        'three PaymentIntents, the last one paid',
      );
      t.same(
        (await eventsOf(inv.id)).filter((e) => e !== 'invoice.created'),
        ['payment.failed', 'payment.failed', 'invoice.paid'],
      );
    },
  );

  await t.test(
    'a lost response: the attempt is unknown, then reconciled from Stripe with exactly one charge',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      t.equal((await addCard(a, 'pm_card_visa')).status, 201);
      const sub = await subscribe(a);
      // The charge is made but every answer is lost (the SDK's own retries with the same key too); its webhooks too.
      await sim.admin('POST', '/_sim/faults', { lose_response: 5, webhook_drop: 3 });
      const out = await run('fatal');
      const inv = await invoiceOf(a, sub.id);
      t.notOk(
        out.payments.some((p: any) => p.invoice_id === inv.id),
        'no outcome for it',
      );
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'unknown' }]);
      t.match(inv, { status: 'open', payment_attempt_status: 'unknown' }, 'the invoice shows the attempt unknown');
      t.equal((await intentsOf(inv.id)).length, 1, 'Stripe made the charge');
      // Money may have been taken: the invoice can be neither voided nor credited until the attempt is settled.
      const voided = await callJson(w.api.url, w.operator.tokens.admin, 'POST', `/v1/billing/invoices/${inv.id}/void`);
      t.equal(voided.status, 409);
      t.equal(voided.body.code, 'invoice_payment_pending');
      const credited = await callJson(
        w.api.url,
        w.operator.tokens.admin,
        'POST',
        `/v1/billing/invoices/${inv.id}/credit-notes`,
        { amount: 1, reason: 'goodwill' },
      );
      t.equal(credited.status, 409);
      t.equal(credited.body.code, 'invoice_payment_pending');
      await sim.admin('POST', '/_sim/faults', { webhook_drop: 0, lose_response: 0 });
      await run();
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'succeeded' }]);
      t.match(await invoiceOf(a, sub.id), { status: 'paid', payment_attempt_status: 'succeeded' });
      const intents = await intentsOf(inv.id);
      t.equal(intents.length, 1, 'still exactly one PaymentIntent');
      t.equal(
        (await sim.objects<Stripe.Charge>('charge')).filter((c) => c.payment_intent === intents[0]!.id).length,
        1,
      );
      t.same(
        (await eventsOf(inv.id)).filter((e) => e === 'invoice.paid'),
        ['invoice.paid'],
      );
    },
  );

  await t.test(
    '3-D Secure: requires_action keeps the invoice open; reordered, duplicated webhooks pay it once',
    async (t) => {
      const a = await createTestAccount(w.api.infra);
      t.equal((await addCard(a, 'pm_card_visa')).status, 201); // makes the Stripe Customer
      const customer = (await pg.query('SELECT customer_id FROM stripe_customers WHERE account_id = $1', [a.accountId]))
        .rows[0].customer_id as string;
      // The card is authenticated once when set up (as the hosted card page does), then saved.
      const si = await sim.sdk.setupIntents.create({
        customer,
        payment_method: 'pm_card_authenticationRequired',
        confirm: true,
      });
      t.equal(si.status, 'requires_action');
      await sim.admin('POST', `/_sim/authenticate/${si.id}`, {});
      const saved = await addCard(a, si.payment_method as string);
      t.equal(saved.status, 201, JSON.stringify(saved.body));
      await w.made(a.tokens.write, 'PATCH', `/v1/billing/payment-methods/${saved.body.id}/default`);
      const sub = await subscribe(a);
      // payment_intent.created and .requires_action, then (after the challenge) charge.succeeded and
      // payment_intent.succeeded: all four held and delivered newest first, each twice.
      await sim.admin('POST', '/_sim/faults', { webhook_reorder: 4, webhook_duplicate: 4 });
      const out = await run();
      const inv = await invoiceOf(a, sub.id);
      t.match(
        out.payments.find((p: any) => p.invoice_id === inv.id),
        { outcome: 'requires_action' },
      );
      t.match(inv, {
        status: 'open',
        payment_attempt_status: 'requires_action',
        last_payment_error: { code: 'authentication_required' },
      });
      const [pi] = await intentsOf(inv.id);
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'requires_action', charge_id: pi!.id }]);
      t.same(
        (await eventsOf(inv.id)).filter((e) => e !== 'invoice.created'),
        ['invoice.payment_action_required'],
      );

      await sim.admin('POST', `/_sim/authenticate/${pi!.id}`, { outcome: 'succeed' });
      await waitUntil(async () => (await invoiceOf(a, sub.id)).status === 'paid', 'the invoice paid by the webhook');
      const ids = (await sim.sdk.events.list({ limit: 100 })).data
        .filter((e) => (e.data.object as { id: string }).id === pi!.id)
        .map((e) => e.id);
      t.ok(ids.length >= 3, 'created, requires_action, succeeded');
      await waitUntil(
        async () =>
          (await pg.query('SELECT count(*)::int AS n FROM stripe_events WHERE event_id = ANY($1)', [ids])).rows[0].n ===
          ids.length,
        'every webhook of the payment, delivered newest first',
      );
      t.match(await attemptsOf(inv.id), [{ attempt: 1, status: 'succeeded', charge_id: pi!.id }]);
      t.same(
        (await eventsOf(inv.id)).filter((e) => e === 'invoice.paid'),
        ['invoice.paid'],
        'paid once',
      );
      t.equal((await invoiceOf(a, sub.id)).last_payment_error, null);

      // The same events delivered again, in any order: each is a duplicate, nothing changes.
      const events = (await sim.sdk.events.list({ limit: 100 })).data.filter(
        (e) => (e.data.object as { metadata?: Record<string, string> }).metadata?.invoice_id === inv.id,
      );
      for (const e of events) {
        const res = await deliver(JSON.stringify(e));
        t.equal(res.status, 200);
        t.equal((await res.json()).outcome, 'duplicate', `${e.type} again is a duplicate`);
      }
      t.same(
        (await eventsOf(inv.id)).filter((e) => e === 'invoice.paid'),
        ['invoice.paid'],
      );
    },
  );

  await t.test('a webhook with a bad signature is refused (400) and changes nothing', async (t) => {
    const [pi] = await intentsOf(paidInvoice.id);
    const forged = JSON.stringify({
      id: 'evt_forged',
      object: 'event',
      type: 'charge.dispute.created',
      data: {
        object: {
          id: 'dp_forged',
          object: 'dispute',
          payment_intent: pi!.id,
          status: 'needs_response',
          reason: 'fraudulent',
        },
      },
    });
    const bad = await deliver(forged, signatureHeader('whsec_not_the_secret', forged));
    t.equal(bad.status, 400);
    t.equal((await bad.json()).code, 'invalid_signature');
    const none = await deliver(forged, 't=1,v1=00');
    t.equal(none.status, 400);
    t.equal(
      (await pg.query(`SELECT count(*)::int AS n FROM stripe_events WHERE event_id = 'evt_forged'`)).rows[0].n,
      0,
    );
    t.equal(
      (await pg.query('SELECT dispute_status FROM invoices WHERE id = $1', [paidInvoice.id])).rows[0].dispute_status,
      null,
    );
  });

  await t.test('a credit note on the paid invoice refunds through Stripe, partially, keyed by the note', async (t) => {
    const r = await callJson(
      w.api.url,
      w.operator.tokens.admin,
      'POST',
      `/v1/billing/invoices/${paidInvoice.id}/credit-notes`,
      {
        amount: 5,
        reason: 'Refund: outage',
      },
    );
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, { type: 'refund', refund: { status: 'succeeded', id: /^re_/ } });
    const [pi] = await intentsOf(paidInvoice.id);
    const refunds = (await sim.objects<Stripe.Refund>('refund')).filter((x) => x.payment_intent === pi!.id);
    t.equal(refunds.length, 1);
    t.match(refunds[0], { amount: 500, currency: 'usd', status: 'succeeded', id: r.body.refund.id });
    t.match(await sim.sdk.charges.retrieve(pi!.latest_charge as string), { amount_refunded: 500, refunded: false });
  });

  await t.test(
    'a refund that fails after Stripe accepted it: the note shows it, the invoice gets it back, once',
    async (t) => {
      const r = await callJson(
        w.api.url,
        w.operator.tokens.admin,
        'POST',
        `/v1/billing/invoices/${paidInvoice.id}/credit-notes`,
        { amount: 1, reason: 'Refund: goodwill' },
      );
      t.equal(r.status, 201, JSON.stringify(r.body));
      t.match(r.body, { type: 'refund', refund: { status: 'succeeded', id: /^re_/ } });
      const credited = async () =>
        (await w.made(paidAccount.tokens.read, 'GET', `/v1/billing/invoices/${paidInvoice.id}`)).amount_credited;
      t.equal(await credited(), 6, 'counted while it stands');
      // Stripe sends charge.refund.updated and refund.failed for it; both are applied at most once between them.
      await sim.admin('POST', `/_sim/refunds/${r.body.refund.id}/fail`, { reason: 'expired_or_canceled_card' });
      const note = async () => w.made(w.operator.tokens.admin, 'GET', `/v1/billing/credit-notes/${r.body.id}`);
      await waitUntil(async () => (await note()).refund?.status === 'failed', 'the late failure on the note');
      t.match(await note(), { refund: { status: 'failed', failure_code: 'expired_or_canceled_card' } });
      t.equal(await credited(), 5, 'the failed refund gave nothing back: no longer credited');
      // The same failure told again changes nothing.
      await sim.admin('POST', `/_sim/refunds/${r.body.refund.id}/fail`, {});
      await new Promise((res) => setTimeout(res, 500));
      t.equal(await credited(), 5, 'credited back once');
    },
  );

  await t.test('a dispute is shown on the invoice and emitted, created then closed', async (t) => {
    const [pi] = await intentsOf(paidInvoice.id);
    const dp = await sim.admin('POST', `/_sim/charges/${pi!.latest_charge}/dispute`, { reason: 'fraudulent' });
    const status = async () =>
      (await pg.query('SELECT dispute_status FROM invoices WHERE id = $1', [paidInvoice.id])).rows[0].dispute_status;
    await waitUntil(async () => (await status()) === 'needs_response', 'the dispute on the invoice');
    const shown = await w.made(paidAccount.tokens.read, 'GET', `/v1/billing/invoices/${paidInvoice.id}`);
    t.match(shown, { status: 'paid', dispute_status: 'needs_response', amount_credited: 5 }, 'the customer sees it');
    // Stripe refunds nothing of a charged-back charge: the note records the failure and takes nothing off.
    const refused = await callJson(
      w.api.url,
      w.operator.tokens.admin,
      'POST',
      `/v1/billing/invoices/${paidInvoice.id}/credit-notes`,
      { amount: 2, reason: 'Refund: late' },
    );
    t.equal(refused.status, 201, JSON.stringify(refused.body));
    t.match(refused.body, { type: 'refund', refund: { status: 'failed', id: null, failure_code: 'charge_disputed' } });
    t.equal(
      (await w.made(paidAccount.tokens.read, 'GET', `/v1/billing/invoices/${paidInvoice.id}`)).amount_credited,
      5,
      'the failed refund does not count',
    );
    await sim.admin('POST', `/_sim/disputes/${dp.id}/close`, { status: 'won' });
    await waitUntil(async () => (await status()) === 'won', 'the dispute closed');
    t.match(await w.made(paidAccount.tokens.read, 'GET', `/v1/billing/invoices/${paidInvoice.id}`), {
      dispute_status: 'won',
    });
    const evs = await eventsOf(paidInvoice.id);
    t.same(
      evs.filter((e) => e.startsWith('invoice.dispute')),
      ['invoice.disputed', 'invoice.dispute_closed'],
    );
    t.ok(paidAccount);
  });
});
