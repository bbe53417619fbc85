import t from 'tap';
import type Stripe from 'stripe';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { stripeBillingWorld } from '../fixtures/stripe.js';
import { billingDay } from '../fixtures/calendar.js';

/**
 * A failed attempt settled by Stripe's webhook rather than by the run that made it: the webhook is applied at the
 * api's clock, the real time, which is behind a `billing run --now` ahead of it. Dunning's next attempt still counts
 * from the attempt: after the retry of day 1 fails, the next is planned after it — not on day 1 again, which the
 * run's next pass would charge at once (a CI run saw a third attempt, and a third PaymentIntent, on day 1).
 * (Customers on a test clock are charged by the sandbox processor: no Stripe webhook concerns them.)
 */
const DUE = billingDay(0);
const DAY_1 = billingDay(1);

t.test('a failed attempt settled by its webhook: the retry after day 1 is planned after day 1', async (t) => {
  const { sim, w } = await stripeBillingWorld(t);
  const pg = w.api.infra.pg;
  const plan = await w.product('Team plan', 20, 'USD');
  const run = async (now: string, logLevel = 'error') => {
    const r = await w.run(now, { ...sim.env, LOG_LEVEL: logLevel });
    t.equal(r.code, 0, r.stderr);
  };
  const attemptsOf = async (invoiceId: string) =>
    (
      await pg.query(
        'SELECT attempt, status, failure_code FROM payment_attempts WHERE invoice_id = $1 ORDER BY attempt',
        [invoiceId],
      )
    ).rows;
  const invoiceOf = async (a: TestAccount, subscriptionId: string) =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
      (i: any) => i.subscription_id === subscriptionId,
    );

  const a = await createTestAccount(w.api.infra);
  const card = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/billing/payment-methods', {
    type: 'card',
    payment_method: 'pm_card_chargeDeclinedInsufficientFunds',
  });
  t.equal(card.status, 201);
  const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
  await run(DUE);
  const inv = await invoiceOf(a, sub.id);
  t.match(inv, { status: 'open', attempt_count: 1, next_payment_attempt_at: billingDay(1) });

  // Day 1's retry: Stripe declines it, but the run never hears the answer — only the webhook tells.
  await sim.admin('POST', '/_sim/faults', { lose_charge_response_percent: 100 });
  await run(DAY_1, 'fatal');
  await sim.admin('POST', '/_sim/faults', { lose_charge_response_percent: 0 });
  await waitUntil(
    async () => (await attemptsOf(inv.id))[1]?.status === 'failed',
    'attempt 2 settled as failed by the payment_failed webhook',
  );
  t.match(await attemptsOf(inv.id), [
    { attempt: 1, status: 'failed', failure_code: 'insufficient_funds' },
    { attempt: 2, status: 'failed', failure_code: 'insufficient_funds' },
  ]);
  t.match(await invoiceOf(a, sub.id), { status: 'open', next_payment_attempt_at: billingDay(3) }, 'due + 3 days');

  // Day 1 again (a second run, or the same run's next pass): nothing is charged a third time.
  await run(DAY_1);
  t.equal((await attemptsOf(inv.id)).length, 2, 'still two attempts');
  const intents = (await sim.objects<Stripe.PaymentIntent>('payment_intent')).filter(
    (p) => p.metadata.invoice_id === inv.id,
  );
  t.equal(intents.length, 2, 'two PaymentIntents: one per attempt');
});
