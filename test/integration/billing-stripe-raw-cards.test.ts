import t from 'tap';
import type Stripe from 'stripe';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startTestStripe } from '../fixtures/stripe.js';

/**
 * STRIPE_FORWARD_RAW_CARDS (docs/payments.md): the opt-in for operators with their own PCI DSS attestation. Raw card
 * details are forwarded to Stripe (a PaymentMethod made from them through the SDK), set up and stored like a
 * PaymentMethod id from the card element; a decline stores nothing. Without the opt-in they are refused (422
 * raw_card_refused: billing-stripe.test.ts).
 */
t.test('raw cards forwarded to Stripe when the operator opts in', async (t) => {
  const sim = await startTestStripe(t);
  const w = await billingWorld(t, { ...sim.env, STRIPE_FORWARD_RAW_CARDS: 'true' });
  const year = new Date().getUTCFullYear() + 2;
  const add = (token: string, number: string) =>
    callJson(w.api.url, token, 'POST', '/v1/billing/payment-methods', {
      type: 'card',
      card: { number, exp_month: 7, exp_year: year, cvc: '123' },
    });

  const a = await createTestAccount(w.api.infra);
  const r = await add(a.tokens.write, '5555 5555 5555 4444');
  t.equal(r.status, 201, JSON.stringify(r.body));
  t.match(r.body, { type: 'card', card: { brand: 'mastercard', last4: '4444', exp_month: 7, exp_year: year } });
  const pms = (await sim.objects<Stripe.PaymentMethod>('payment_method')).filter(
    (p) => p.card?.last4 === '4444' && p.customer,
  );
  t.equal(pms.length, 1, 'Stripe holds the card, attached to the account’s Customer');
  const stored = await w.api.infra.pg.query('SELECT processor, processor_token FROM payment_methods WHERE id = $1', [
    r.body.id,
  ]);
  t.same(stored.rows, [{ processor: 'stripe', processor_token: pms[0]!.id }], 'only the PaymentMethod id is kept');
  t.notOk(JSON.stringify(r.body).includes('5555555555554444'), 'the number is not echoed');

  const declined = await add(a.tokens.write, '4000000000000002');
  t.equal(declined.status, 402);
  t.equal(declined.body.code, 'generic_decline');
  const count = await w.api.infra.pg.query('SELECT count(*)::int AS n FROM payment_methods WHERE account_id = $1', [
    a.accountId,
  ]);
  t.equal(count.rows[0].n, 1, 'nothing stored for the declined card');

  const invalid = await add(a.tokens.write, '4242424242424241');
  t.equal(invalid.status, 422, 'a number failing the Luhn check is refused before Stripe is called');
});
