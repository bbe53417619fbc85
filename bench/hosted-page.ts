/**
 * The hosted invoice page's server render time (docs/payments.md "Hosted pages"): the real api in this process
 * against the stack's Postgres, NATS and ClickHouse (started here when not running, as `npm test` does), one customer with an open invoice of `--lines` lines and a saved card, then `--requests` GETs of its
 * hosted page over loopback, `--concurrency` at a time (the HTML as served: link check, the document's queries, the
 * pay panel, rendering; no browser). Prints one JSON document of latency percentiles in milliseconds.
 *
 *   node dist/bench/hosted-page.js [--requests 2000] [--concurrency 8] [--lines 20]
 */
import { randomBytes } from 'node:crypto';
import { stackUp } from '../infra/stack/stack.js';
import { REPO_ROOT } from '../shared/paths.js';
import { isolatedConfig } from '../test/fixtures/env.js';
import { startApi } from '../test/fixtures/api.js';
import { createTestAccount } from '../test/fixtures/auth.js';
import { callJson } from '../test/fixtures/matrix.js';
import { insertInvoice } from '../test/fixtures/invoices.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : fallback;
}
const requests = arg('requests', 2000);
const concurrency = arg('concurrency', 8);
const lineCount = arg('lines', 20);

const stack = await stackUp({ root: REPO_ROOT, env: process.env, log: () => undefined });
Object.assign(process.env, {
  DATABASE_URL: stack.databaseUrl,
  NATS_URL: stack.natsUrl,
  CLICKHOUSE_URL: stack.clickhouseUrl,
  SECRET_KEY: process.env.SECRET_KEY || randomBytes(32).toString('hex'),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
});
const teardowns: (() => unknown)[] = [];
const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
try {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const customer = await createTestAccount(api.infra, { name: 'Bench Customer <b>&</b>' });
  const ok = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await callJson(api.url, token, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const product = await ok(operator.tokens.admin, 'POST', '/v1/products', { name: 'Plan', price: 20, currency: 'USD' });
  const sub = await ok(customer.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: product.id }] });
  await ok(customer.tokens.write, 'POST', '/v1/billing/payment-methods', {
    type: 'card',
    card: { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' },
  });
  const invoiceId = await insertInvoice(api.infra.pg, {
    accountId: customer.accountId,
    customerId: customer.customerId,
    subscriptionId: sub.id,
    amount: (lineCount * 1.5).toFixed(2),
    periodStart: '2026-10-01',
    periodEnd: '2026-10-31',
    lines: Array.from({ length: lineCount }, (_, i) => ({
      product_id: product.id,
      description: `Line ${i + 1} <with markup & "quotes">`,
      quantity: '3',
      unit_price: '0.5',
      amount: '1.50',
    })),
  });
  const hosted = (await ok(customer.tokens.read, 'GET', `/v1/billing/invoices/${invoiceId}`)).hosted_invoice_url;
  // PUBLIC_BASE_URL names no port here (the api listens on any free one): its path on the api's own address.
  const url = api.url + new URL(hosted as string).pathname;
  const first = await fetch(url);
  if (first.status !== 200 || !(await first.text()).includes('id="pay-saved"'))
    throw new Error(`the page did not render (${first.status})`);
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < requests) {
        const s = performance.now();
        const r = await fetch(url);
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`status ${r.status}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(2));
  console.log(
    JSON.stringify(
      {
        bench: 'hosted-invoice-page',
        requests: latencies.length,
        concurrency,
        lines: lineCount,
        pages_per_second: Math.round(latencies.length / seconds),
        ms: { p50: pct(50), p95: pct(95), p99: pct(99), max: pct(100) },
      },
      null,
      2,
    ),
  );
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
