import t from 'tap';
import type Stripe from 'stripe';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { startRoleProcess } from '../fixtures/role-process.js';
import { startTestStripe } from '../fixtures/stripe.js';
import { newId } from '../../shared/ids.js';

/**
 * The billing run of issue 43 at scale: 1,000 invoices charged through Stripe (the simulator, through the official
 * SDK) by the billing role as its own process, which is killed with SIGKILL in the middle of charging while 10 % of
 * the charges are made by Stripe but their answer is lost. A restarted role reconciles from Stripe's record: every
 * invoice paid, Stripe holding exactly one succeeded PaymentIntent per invoice for its amount to the cent, nothing
 * charged twice, and neither key in any log line.
 */
const ACCOUNTS = 10;
const PER_ACCOUNT = 100;
const PRICES = [9.99, 12.34, 0.5, 100.01];

t.test('1,000 invoices through Stripe with kill -9 and lost answers', async (t) => {
  const sim = await startTestStripe(t);
  const w = await billingWorld(t, sim.env);
  const pg = w.api.infra.pg;
  const products = await Promise.all(PRICES.map((p, i) => w.product(`Plan ${i}`, p, 'USD')));

  // Customers with a Stripe card each (the API saves it: a Customer and a SetupIntent per account).
  const accounts: TestAccount[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const a = await createTestAccount(w.api.infra);
    const r = await callJson(w.api.url, a.tokens.write, 'POST', '/v1/billing/payment-methods', {
      type: 'card',
      payment_method: 'pm_card_visa',
    });
    if (r.status !== 201) throw new Error(`card not saved: ${r.status} ${JSON.stringify(r.body)}`);
    accounts.push(a);
  }
  // Subscriptions begun on the 2nd of last month (rows as POST /v1/subscriptions writes them; set-up speed): the
  // role, which bills at the real time, closes exactly last month's period of each.
  const now = new Date();
  const createdAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 2));
  const subs: string[] = [];
  for (const [n, a] of accounts.entries()) {
    const ids = Array.from({ length: PER_ACCOUNT }, () => newId('sub'));
    subs.push(...ids);
    await pg.query(
      `INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT unnest($1::text[]), $2, 'active', 'USD', $3`,
      [ids, a.accountId, createdAt],
    );
    await pg.query(
      `INSERT INTO subscription_items (subscription_id, position, product_id)
       SELECT id, 0, ($2::text[])[1 + (ord + $3) % $4] FROM unnest($1::text[]) WITH ORDINALITY AS s(id, ord)`,
      [ids, products, n, products.length],
    );
  }
  t.equal(subs.length, 1000);

  const logs: string[] = [];
  const roleEnv = {
    ...sim.env,
    BILLING_GRACE_SECONDS: '0',
    BILLING_DRAFTS: 'false',
    BILLING_INTERVAL_SECONDS: '1',
    LOG_LEVEL: 'info',
  };
  const count = async (sql: string) => Number((await pg.query(sql, [subs])).rows[0].n);
  const ofRun = `invoice_id IN (SELECT id FROM invoices WHERE subscription_id = ANY($1))`;
  const charges = async () => (await sim.admin('GET', '/_sim/requests'))['POST ^\\/v1\\/payment_intents$'] ?? 0;

  await sim.admin('POST', '/_sim/faults', { lose_charge_response_percent: 10 });
  const started = Date.now();
  const first = await startRoleProcess(t, 'billing', w.config, roleEnv, (c) => logs.push(c));
  // Killed once Stripe made a good part of the charges but before the run wrote their outcomes.
  await waitUntil(
    async () => (await charges()) >= 200 || first.child.exitCode !== null,
    'charges under way',
    90_000,
    5,
  );
  first.child.kill('SIGKILL');
  await new Promise((r) => (first.child.signalCode !== null ? r(null) : first.child.once('exit', r)));
  const atKill = {
    charged: await charges(),
    open: await count(`SELECT count(*) AS n FROM payment_attempts WHERE status IN ('pending', 'unknown') AND ${ofRun}`),
    paid: await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1) AND status = 'paid'`),
  };
  t.ok(atKill.charged >= 200, `killed after ${atKill.charged} PaymentIntent requests`);
  t.ok(atKill.open > 0, `${atKill.open} attempts recorded but not completed when killed`);
  t.ok(atKill.paid < 1000, `${atKill.paid} invoices paid when killed`);

  // Restarted (the lost answers go on): the next runs reconcile what is unknown and finish what is pending.
  await startRoleProcess(t, 'billing', w.config, roleEnv, (c) => logs.push(c));
  await waitUntil(
    async () =>
      (await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1) AND status = 'paid'`)) === 1000,
    'every invoice paid',
    120_000,
    200,
  );
  t.comment(`1,000 invoices closed and paid in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const invoices = (
    await pg.query<{ id: string; amount: string; attempt_count: number }>(
      'SELECT id, amount::text AS amount, attempt_count FROM invoices WHERE subscription_id = ANY($1)',
      [subs],
    )
  ).rows;
  t.equal(invoices.length, 1000, 'one invoice per subscription');
  t.ok(
    invoices.every((i) => i.attempt_count === 1),
    'each paid at its first attempt (a lost answer is the same attempt, settled)',
  );
  const intents = (await sim.objects<Stripe.PaymentIntent>('payment_intent')).filter((p) =>
    invoices.some((i) => i.id === p.metadata.invoice_id),
  );
  const byInvoice = new Map<string, Stripe.PaymentIntent[]>();
  for (const p of intents) byInvoice.set(p.metadata.invoice_id!, [...(byInvoice.get(p.metadata.invoice_id!) ?? []), p]);
  t.equal(byInvoice.size, 1000, 'a PaymentIntent for every invoice');
  t.ok(
    [...byInvoice.values()].every((ps) => ps.length === 1 && ps[0]!.status === 'succeeded'),
    'exactly one PaymentIntent per invoice, succeeded',
  );
  const cents = (amount: string) => {
    const [whole, frac = ''] = amount.split('.');
    return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  };
  const wrong = invoices.filter((i) => byInvoice.get(i.id)?.[0]?.amount !== cents(i.amount));
  t.same(wrong, [], 'each charge is its invoice amount to the cent');
  const total = invoices.reduce((s, i) => s + cents(i.amount), 0);
  t.equal(
    intents.reduce((s, p) => s + p.amount, 0),
    total,
    `Σ charged = Σ invoiced (${total} cents)`,
  );
  const stripeCharges = (await sim.objects<Stripe.Charge>('charge')).filter(
    (c) => c.status === 'succeeded' && intents.some((p) => p.id === c.payment_intent),
  );
  t.equal(stripeCharges.length, 1000, 'one card charge per invoice');
  const attempts = (
    await pg.query(
      `SELECT status, count(*)::int AS n FROM payment_attempts WHERE ${ofRun} GROUP BY status ORDER BY status`,
      [subs],
    )
  ).rows;
  t.same(attempts, [{ status: 'succeeded', n: 1000 }], 'every attempt settled as succeeded');
  const lost = (await sim.admin('GET', '/_sim/requests')).lost ?? 0;
  t.ok(lost >= 50, `${lost} charge answers lost (10 % of the keys, each retry of those too)`);
  const searched = (await sim.admin('GET', '/_sim/requests'))['GET ^\\/v1\\/payment_intents\\/search$'] ?? 0;
  t.ok(searched >= 50, `reconciliation looked ${searched} attempts up in Stripe`);
  const events = await pg.query(
    `SELECT type, count(*)::int AS n, count(DISTINCT data->>'invoice_id')::int AS invoices FROM outbox_events
      WHERE ${ofRun.replace('invoice_id', "data->>'invoice_id'")} GROUP BY type ORDER BY type`,
    [subs],
  );
  t.same(
    events.rows,
    [
      { type: 'invoice.created', n: 1000, invoices: 1000 },
      { type: 'invoice.paid', n: 1000, invoices: 1000 },
    ],
    'invoice.created and invoice.paid once per invoice',
  );

  const text = logs.join('');
  t.ok(text.includes('the attempt stays pending'), 'the lost answers were logged');
  t.notOk(text.includes(sim.secretKey), 'the Stripe secret key is in no log line');
  t.notOk(text.includes(sim.secretKey.slice(8)), 'nor any recognisable part of it');
  t.notOk(text.includes(sim.webhookSecret), 'nor the webhook signing secret');
});
