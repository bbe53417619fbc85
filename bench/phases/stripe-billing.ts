/**
 * `stripe-billing` phase (issue 43: a billing run with the Stripe processor, ≥ 500 invoices charged per second).
 *
 * The Stripe simulator (test/stripe-sim/) is launched as the stack launches it (its own process, state file), and
 * the billing engine charges through the official `stripe` SDK pointed at it (PAYMENT_PROCESSOR=stripe,
 * STRIPE_API_BASE) — each invoice one off-session PaymentIntent over HTTP, as against api.stripe.com.
 *
 * Set-up (not measured): `accounts` accounts, each with a card saved through the processor (its Stripe Customer and a
 * confirmed SetupIntent), and `invoices` flat subscriptions spread over them, created last month. Then ONE billing
 * run at now, in this process: every period closes and every invoice is charged. Printed: invoices charged per second
 * over the whole run (close included), the processor's share of the time, and a check that Stripe holds exactly one
 * succeeded PaymentIntent per invoice for its amount.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Stripe from 'stripe';
import type { BenchWorld } from '../world.js';
import { benchPort } from '../ports.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { createLogger } from '../../shared/logging.js';
import { newId } from '../../shared/ids.js';
import type { Config } from '../../shared/config.js';
import { billingDeps } from '../../services/workers/billing-deps.js';
import { runBilling } from '../../services/domain/billing/run.js';
import type { BillingTimings } from '../../services/domain/billing/deps.js';
import type { StripeProcessor } from '../../services/domain/payments/stripe.js';
import { startStripeSimServer } from '../../infra/stack/stripe-sim.js';

export interface StripeBillingResult {
  accounts: number;
  invoices: number;
  paid: number;
  /** PaymentIntents Stripe holds for the run's invoices, and those succeeded for exactly the invoice amount. */
  payment_intents: number;
  exact_charges: number;
  seconds: number;
  invoices_charged_per_s: number;
  /** Milliseconds summed per store over the run; processor_ms = the Stripe calls. */
  timings: BillingTimings;
  goal_met: boolean;
}

export const STRIPE_BILLING_GOAL_PER_S = 500;

export async function runStripeBillingPhase(opts: {
  world: BenchWorld;
  log: (m: string) => void;
  invoices: number;
  accounts: number;
}): Promise<StripeBillingResult> {
  const { log } = opts;
  const dir = await mkdtemp(path.join(tmpdir(), 'meterline-bench-stripe-'));
  const sim = await startStripeSimServer({ dir, port: await benchPort() });
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const config: Config = {
    ...opts.world.config,
    PAYMENT_PROCESSOR: 'stripe',
    STRIPE_SECRET_KEY: secretKey,
    STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(16).toString('hex')}`,
    STRIPE_API_BASE: sim.url,
  };
  const pg = createPgPool(config.DATABASE_URL, 6);
  const ch = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  const deps = billingDeps({ pg, clickhouse: ch, config, log: createLogger({ level: 'warn', name: 'bench-stripe' }) });
  try {
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const t0 = performance.now();
    const accounts = Array.from({ length: opts.accounts }, () => ({ id: newId('acct'), customer: newId('cus') }));
    await pg.query(
      `INSERT INTO accounts (id, customer_id, name) SELECT a, c, 'bench stripe' FROM unnest($1::text[], $2::text[]) AS u(a, c)`,
      [accounts.map((a) => a.id), accounts.map((a) => a.customer)],
    );
    // Each account's card saved the way POST /v1/billing/payment-methods saves a PaymentMethod id.
    const processor = deps.processor as StripeProcessor;
    const tokens: string[] = [];
    for (let i = 0; i < accounts.length; i += 16)
      tokens.push(
        ...(await Promise.all(
          accounts.slice(i, i + 16).map(async (a) => {
            const saved = await processor.savePaymentMethod(a.id, 'pm_card_visa');
            if (!saved.ok) throw new Error(`stripe-billing: card not saved: ${saved.message}`);
            return saved.token;
          }),
        )),
      );
    await pg.query(
      `INSERT INTO payment_methods (id, account_id, type, brand, last4, exp_month, exp_year, fingerprint, processor, processor_token, is_default)
       SELECT p, a, 'card', 'visa', '4242', 12, 2099, 'bench', 'stripe', t, true FROM unnest($1::text[], $2::text[], $3::text[]) AS u(p, a, t)`,
      [accounts.map(() => newId('pm')), accounts.map((a) => a.id), tokens],
    );
    const product = newId('prod');
    await pg.query(
      `INSERT INTO products (id, name, price, currency, pricing) VALUES ($1, 'Bench Stripe plan', 19.99, 'USD', 'flat')`,
      [product],
    );
    const subs = Array.from({ length: opts.invoices }, (_, i) => ({
      id: newId('sub'),
      account: accounts[i % accounts.length]!.id,
    }));
    await pg.query(
      `INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT s, a, 'active', 'USD', $3 FROM unnest($1::text[], $2::text[]) AS u(s, a)`,
      [subs.map((s) => s.id), subs.map((s) => s.account), new Date(lastMonth + 3_600_000)],
    );
    await pg.query(
      `INSERT INTO subscription_items (subscription_id, position, product_id) SELECT s, 0, $2 FROM unnest($1::text[]) AS u(s)`,
      [subs.map((s) => s.id), product],
    );
    await pg.query('ANALYZE subscriptions, subscription_items, invoices, payment_methods, accounts');
    log(
      `stripe-billing: set up ${subs.length} subscriptions over ${accounts.length} accounts with Stripe cards in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const started = performance.now();
    const r = await runBilling(deps, now);
    const seconds = (performance.now() - started) / 1000;
    const paid = r.payments.filter((p) => p.outcome === 'succeeded').length;

    // Stripe's side: exactly one succeeded PaymentIntent per invoice, for 19.99 USD.
    const ids = new Set(r.invoices.map((i) => i.id));
    // The simulator's own record of every PaymentIntent (its test-only /_sim/objects).
    const res = await fetch(`${sim.url}/_sim/objects/payment_intent`, {
      headers: { authorization: `Bearer ${secretKey}` },
    });
    const intents = ((await res.json()) as { data: Stripe.PaymentIntent[] }).data.filter((pi) =>
      ids.has(pi.metadata.invoice_id!),
    );
    const perInvoice = new Map<string, number>();
    for (const pi of intents)
      perInvoice.set(pi.metadata.invoice_id!, (perInvoice.get(pi.metadata.invoice_id!) ?? 0) + 1);
    const exact = intents.filter(
      (pi) => pi.status === 'succeeded' && pi.amount === 1999 && perInvoice.get(pi.metadata.invoice_id!) === 1,
    ).length;
    const result: StripeBillingResult = {
      accounts: accounts.length,
      invoices: r.invoices.length,
      paid,
      payment_intents: intents.length,
      exact_charges: exact,
      seconds: Math.round(seconds * 100) / 100,
      invoices_charged_per_s: Math.round(paid / seconds),
      timings: Object.fromEntries(
        Object.entries(r.timings).map(([k, v]) => [k, Math.round(v)]),
      ) as unknown as BillingTimings,
      goal_met: paid / seconds >= STRIPE_BILLING_GOAL_PER_S && exact === r.invoices.length,
    };
    log(`stripe-billing: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await deps.linesPool.destroy();
    await Promise.allSettled([pg.end(), ch.close(), sim.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The report's lines for this phase. */
export function stripeBillingLines(r: StripeBillingResult): string[] {
  return [
    `stripe-billing: ${r.paid} of ${r.invoices} invoices charged through Stripe (the simulator, official SDK) in ${r.seconds} s → ${r.invoices_charged_per_s} invoices/s (goal ≥ ${STRIPE_BILLING_GOAL_PER_S}: ${r.goal_met ? 'met' : 'NOT met'}); Stripe holds ${r.payment_intents} PaymentIntents, ${r.exact_charges} exactly one succeeded per invoice for its amount`,
    `stripe-billing time by store: Postgres ${r.timings.postgres_ms} ms, piscina ${r.timings.piscina_ms} ms, processor (Stripe calls, 256 at once) ${r.timings.processor_ms} ms`,
  ];
}
