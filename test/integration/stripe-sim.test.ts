import { createServer } from 'node:http';
import t from 'tap';
import Stripe from 'stripe';
import { startTestStripe } from '../fixtures/stripe.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * The Stripe simulator (test/stripe-sim/) through the official SDK, as the Stripe processor uses it: objects,
 * Stripe's error objects and statuses, Idempotency-Key rules, test cards, 3-D Secure, refunds, disputes, signed
 * webhooks and the faults the payment tests inject.
 */
t.test('stripe simulator', async (t) => {
  const sim = await startTestStripe(t);
  const stripe = sim.sdk;
  const cardError = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    if (!(e instanceof Stripe.errors.StripeError)) throw new Error(`expected a Stripe error, got ${String(e)}`);
    return e;
  };

  t.test('a customer made twice with one Idempotency-Key is one customer; other params with it → 400', async (t) => {
    const a = await stripe.customers.create(
      { email: 'a@example.com', metadata: { account_id: 'acct_1' } },
      { idempotencyKey: 'cus-1' },
    );
    const b = await stripe.customers.create(
      { email: 'a@example.com', metadata: { account_id: 'acct_1' } },
      { idempotencyKey: 'cus-1' },
    );
    t.equal(b.id, a.id);
    t.match(a, { object: 'customer', email: 'a@example.com', metadata: { account_id: 'acct_1' }, livemode: false });
    const mine = async () => (await sim.objects('customer')).filter((c) => c.metadata.account_id === 'acct_1').length;
    t.equal(await mine(), 1);
    const e = await cardError(stripe.customers.create({ email: 'b@example.com' }, { idempotencyKey: 'cus-1' }));
    t.equal(e.statusCode, 400);
    t.equal(e.type, 'StripeIdempotencyError');
    t.equal(await mine(), 1);
  });

  t.test('a missing object → 404 resource_missing; no key → 401', async (t) => {
    const e = await cardError(stripe.paymentIntents.retrieve('pi_missing'));
    t.equal(e.statusCode, 404);
    t.equal(e.code, 'resource_missing');
    const res = await fetch(`${sim.url}/v1/customers`, { method: 'POST' });
    t.equal(res.status, 401);
  });

  const customer = await stripe.customers.create({ email: 'pay@example.com' });
  const attached = async (token: string) => stripe.paymentMethods.attach(token, { customer: customer.id });
  const charge = (pm: string, amount: number, key?: string) =>
    stripe.paymentIntents.create(
      {
        amount,
        currency: 'eur',
        customer: customer.id,
        payment_method: pm,
        confirm: true,
        off_session: true,
        metadata: { invoice_id: 'inv_1' },
      },
      key ? { idempotencyKey: key } : undefined,
    );

  t.test(
    '4242 attaches with brand, last4 and expiry, and an off-session charge succeeds with one charge',
    async (t) => {
      const pm = await attached('pm_card_visa');
      t.match(pm, {
        object: 'payment_method',
        type: 'card',
        customer: customer.id,
        card: { brand: 'visa', last4: '4242' },
      });
      t.ok(pm.card!.exp_year > new Date().getUTCFullYear());
      const pi = await charge(pm.id, 1230);
      t.match(pi, {
        status: 'succeeded',
        amount: 1230,
        amount_received: 1230,
        currency: 'eur',
        metadata: { invoice_id: 'inv_1' },
      });
      const ch = await stripe.charges.retrieve(pi.latest_charge as string);
      t.match(ch, { status: 'succeeded', paid: true, amount: 1230, payment_intent: pi.id });
    },
  );

  t.test('4000…0002 cannot be attached: 402 card_declined', async (t) => {
    const e = await cardError(attached('pm_card_chargeDeclined'));
    t.equal(e.statusCode, 402);
    t.equal(e.type, 'StripeCardError');
    t.equal(e.code, 'card_declined');
  });

  for (const [token, code, decline] of [
    ['pm_card_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
    ['pm_card_chargeDeclinedExpiredCard', 'expired_card', 'expired_card'],
  ] as const) {
    t.test(`${token}: attaches, the charge is declined (${decline}) and the PaymentIntent records it`, async (t) => {
      const pm = await attached(token);
      const e = await cardError(charge(pm.id, 500));
      t.equal(e.statusCode, 402);
      t.equal(e.code, code);
      t.equal(e.decline_code, decline);
      const pi = e.payment_intent!;
      t.equal(pi.status, 'requires_payment_method');
      const again = await stripe.paymentIntents.retrieve(pi.id);
      t.match(again.last_payment_error, { type: 'card_error', code, decline_code: decline });
    });
  }

  t.test('3-D Secure: 3184 always requires_action; 3155 only until set up; the challenge completes it', async (t) => {
    const always = await attached('pm_card_authenticationRequired');
    const pi = await charge(always.id, 700);
    t.equal(pi.status, 'requires_action');
    t.equal(pi.next_action?.type, 'redirect_to_url');
    await sim.admin('POST', `/_sim/authenticate/${pi.id}`, { outcome: 'succeed' });
    t.equal((await stripe.paymentIntents.retrieve(pi.id)).status, 'succeeded');

    const onSetup = await stripe.paymentMethods.create({
      type: 'card',
      card: { token: 'tok_authenticationRequiredOnSetup' },
    } as Stripe.PaymentMethodCreateParams);
    const si = await stripe.setupIntents.create({
      customer: customer.id,
      payment_method: onSetup.id,
      confirm: true,
      usage: 'off_session',
    });
    t.equal(si.status, 'requires_action');
    await sim.admin('POST', `/_sim/authenticate/${si.id}`, {});
    t.equal((await stripe.setupIntents.retrieve(si.id)).status, 'succeeded');
    t.equal((await stripe.paymentMethods.retrieve(onSetup.id)).customer, customer.id);
    t.equal((await charge(onSetup.id, 800)).status, 'succeeded', 'set up: off-session needs no challenge');
  });

  t.test('refunds: partial, then the rest; more than is left → 400', async (t) => {
    const pm = await attached('pm_card_visa');
    const pi = await charge(pm.id, 1000);
    const r1 = await stripe.refunds.create({ payment_intent: pi.id, amount: 300 }, { idempotencyKey: 'cn_1' });
    const again = await stripe.refunds.create({ payment_intent: pi.id, amount: 300 }, { idempotencyKey: 'cn_1' });
    t.equal(again.id, r1.id, 'the same key is the same refund');
    t.match(r1, { object: 'refund', status: 'succeeded', amount: 300, payment_intent: pi.id });
    const e = await cardError(stripe.refunds.create({ payment_intent: pi.id, amount: 701 }));
    t.equal(e.statusCode, 400);
    t.equal(e.code, 'amount_too_large');
    await stripe.refunds.create({ payment_intent: pi.id, amount: 700 });
    t.match(await stripe.charges.retrieve(pi.latest_charge as string), { amount_refunded: 1000, refunded: true });
  });

  t.test(
    'webhooks are signed (constructEvent accepts them), and drop / duplicate / reorder faults apply',
    async (t) => {
      const got: Stripe.Event[] = [];
      const bad: string[] = [];
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          try {
            got.push(
              stripe.webhooks.constructEvent(
                Buffer.concat(chunks),
                req.headers['stripe-signature'] as string,
                sim.webhookSecret,
              ),
            );
          } catch (e) {
            bad.push(String(e));
          }
          res.end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      t.teardown(() => server.close());
      const port = (server.address() as { port: number }).port;
      await sim.admin('POST', '/_sim/webhook_endpoint', {
        url: `http://127.0.0.1:${port}/`,
        secret: sim.webhookSecret,
      });
      const pm = await attached('pm_card_visa');
      const pi = await charge(pm.id, 100);
      await waitUntil(() => got.some((e) => e.type === 'payment_intent.succeeded'), 'payment_intent.succeeded');
      t.same(bad, []);
      const ev = got.find((e) => e.type === 'payment_intent.succeeded')!;
      t.equal((ev.data.object as Stripe.PaymentIntent).id, pi.id);
      const listed = await stripe.events.list({ type: 'payment_intent.succeeded', limit: 1 });
      t.equal(listed.data[0]!.id, ev.id, 'the events list has it, newest first');

      await sim.admin('POST', '/_sim/faults', { webhook_duplicate: 1 });
      const before = got.length;
      const pi2 = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
      await waitUntil(() => got.length >= before + 2, 'a duplicated event');
      t.equal(got.filter((e) => (e.data.object as { id: string }).id === pi2.id).length, 2);

      await sim.admin('POST', '/_sim/faults', { webhook_drop: 1 });
      await stripe.paymentIntents.create({ amount: 100, currency: 'eur', metadata: { dropped: 'yes' } });
      await sim.admin('POST', '/_sim/faults', { webhook_reorder: 2 });
      const n = got.length;
      const pi3 = await charge(pm.id, 200); // payment_intent.created, charge.succeeded, payment_intent.succeeded: the first two held
      await waitUntil(() => got.length >= n + 3, 'the reordered events');
      const mine = got.slice(n).map((e) => e.type);
      t.same(
        mine,
        ['charge.succeeded', 'payment_intent.created', 'payment_intent.succeeded'],
        'the held two arrive newest first',
      );
      t.notOk(
        got.some((e) => (e.data.object as { metadata?: Record<string, string> }).metadata?.dropped),
        'the dropped event never came',
      );
      t.ok(pi3.id);
    },
  );

  t.test(
    'faults: a 500 does nothing; a lost response was carried out and its key replays it; state survives a restart',
    async (t) => {
      const pm = await attached('pm_card_visa');
      const count = async () => (await sim.objects('payment_intent')).length;
      const n0 = await count();
      await sim.admin('POST', '/_sim/faults', { server_error: 1 });
      const e = await cardError(charge(pm.id, 100, 'att-500'));
      t.equal(e.statusCode, 500);
      t.equal(await count(), n0);
      // The SDK retries a closed connection once (same key) even with retries off: both answers are lost.
      await sim.admin('POST', '/_sim/faults', { lose_response: 2 });
      const lost = await cardError(charge(pm.id, 100, 'att-lost'));
      t.equal(lost.type, 'StripeConnectionError');
      t.equal(await count(), n0 + 1, 'the charge was made');
      const found = await stripe.paymentIntents.search({
        query: "metadata['invoice_id']:'inv_1' AND status:'succeeded'",
      });
      t.ok(found.data.length >= 1);
      const replay = await charge(pm.id, 100, 'att-lost');
      t.equal(replay.status, 'succeeded');
      t.equal(await count(), n0 + 1, 'the retry with the same key made no second charge');
      await sim.admin('POST', '/_sim/faults', { timeout: 2, timeout_ms: 300 });
      t.equal((await cardError(stripe.customers.retrieve(customer.id))).type, 'StripeConnectionError');

      await sim.stop();
      await sim.start();
      t.equal(await count(), n0 + 1, 'the restarted simulator still knows every PaymentIntent');
      t.equal((await charge(pm.id, 100, 'att-lost')).id, replay.id, 'and every idempotency key');
    },
  );
});
