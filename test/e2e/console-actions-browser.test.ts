import t from 'tap';
import { waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, cardBody } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';
import { startDispatcher } from '../integration/webhook-delivery-helpers.js';
import { startConsumer } from '../integration/ingest-helpers.js';

/**
 * The console's actions on billing and webhooks (docs/design.md §12) in headless Chromium against the whole api,
 * the usage consumer and the webhook dispatcher: the upcoming invoice computed from real usage, Pay now
 * (a successful charge and a failing one, whose detail the page shows), and a failed webhook delivery
 * retried from the delivery log until a real local receiver accepts it.
 */
t.test('web console: upcoming invoice, pay now, retry a webhook delivery', async (t) => {
  const world = await startConsoleApi(t);
  await startConsumer(t, world.config, { maxWaitMs: 100 });
  await startDispatcher(t, world.config);
  const receiver = await startReceiver(t);
  const { base } = world;
  const user = await createTestAccount(world.infra, { operator: true, name: 'Acme Billing' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, user.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  // A month of this account so far: a meter with usage, a plan and a metered product, a subscription to both.
  const meter = await api('POST', '/v1/meters', { name: 'API requests', unit: 'requests', aggregation: 'sum' });
  const now = Date.now();
  const records = [1200, 800, 500].map((value, i) => ({
    value,
    timestamp: new Date(now - (i + 1) * 60_000).toISOString(),
    id: `r${i}`,
  }));
  await waitUntil(
    async () =>
      (await callJson(base, user.tokens.write, 'POST', `/v1/meters/${meter.id}/usage`, records)).status === 202,
    'the usage to be accepted',
  );
  const plan = await api('POST', '/v1/products', { name: 'Team plan', price: 99, currency: 'USD' });
  const calls = await api('POST', '/v1/products', {
    name: 'API requests',
    price: 0.0015,
    currency: 'USD',
    pricing: 'metered',
  });
  await api('POST', '/v1/billing/payment-methods', cardBody('4242424242424242'));
  const monthStart = Date.parse(new Date(now).toISOString().slice(0, 7) + '-01T00:00:00Z');
  const thisMonth = records.filter((r) => Date.parse(r.timestamp) >= monthStart).reduce((a, r) => a + r.value, 0);
  const usagePath = `/v1/meters/${meter.id}/usage?window=none&start_date=${new Date(monthStart).toISOString().slice(0, 10)}`;
  await waitUntil(
    async () => (await callJson(base, user.tokens.read, 'GET', usagePath)).body?.value === thisMonth,
    'the usage to be queryable',
    30_000,
    100,
  );
  const sub = await api('POST', '/v1/subscriptions', {
    items: [{ product_id: plan.id }, { product_id: calls.id, meter_id: meter.id }],
  });

  const { page, consoleErrors } = await launchBrowser(t);
  await signInToConsole(page, base, user, '#/invoices');

  await t.test('the upcoming invoice of a subscription, from its usage so far', async (t) => {
    await page.waitForSelector('select[name="subscription"]');
    await Promise.all([
      page.waitForURL(new RegExp(`#/invoices/upcoming/${sub.id}$`)),
      page.selectOption('select[name="subscription"]', sub.id),
    ]);
    await page.waitForSelector('[data-testid="invoice-total"]');
    // 2,500 requests × 0.0015 = 3.75; + 99 for the plan.
    const metered = Math.round(thisMonth * 0.0015 * 100) / 100;
    t.equal(await page.textContent('[data-testid="invoice-total"]'), `${(99 + metered).toFixed(2)} USD`);
    t.match(
      await page.textContent('table[data-testid="invoice-lines"]'),
      new RegExp(`Team plan[\\s\\S]*API requests[\\s\\S]*${thisMonth.toLocaleString('en-US')}[\\s\\S]*0\\.0015 USD`),
    );
    t.match(await page.textContent('.facts'), /draft/);
    await screenshot(page, 'upcoming-invoice');
  });

  await t.test('pay now: charged with the default card; a failing card shows why', async (t) => {
    const line = { product_id: plan.id, description: 'Team plan', quantity: '1', unit_price: '99', amount: '99' };
    const open = await insertInvoice(world.infra.pg, {
      accountId: user.accountId,
      customerId: user.customerId,
      subscriptionId: sub.id,
      amount: '99',
      periodStart: '2026-09-01',
      periodEnd: '2026-09-30',
      lines: [line],
    });
    await page.goto(`${base}/console#/invoices/${open}`);
    await page.click('button:has-text("Pay now")');
    await page.waitForSelector('[role="status"]:has-text("Paid: 99.00 USD")');
    await page.waitForSelector('.facts .badge-paid');
    t.equal((await api('GET', `/v1/billing/invoices/${open}`)).status, 'paid', 'the API agrees');
    t.equal(await page.locator('button:has-text("Pay now")').count(), 0, 'nothing left to pay');

    const broke = await api('POST', '/v1/billing/payment-methods', cardBody('4000000000009995'));
    await api('PATCH', `/v1/billing/payment-methods/${broke.id}/default`);
    const unpaid = await insertInvoice(world.infra.pg, {
      accountId: user.accountId,
      customerId: user.customerId,
      subscriptionId: sub.id,
      amount: '99',
      periodStart: '2026-08-01',
      periodEnd: '2026-08-31',
      lines: [line],
    });
    await page.goto(`${base}/console#/invoices/${unpaid}`);
    await page.click('button:has-text("Pay now")');
    const alert = await page.waitForSelector('[role="alert"]:has-text("insufficient_funds")');
    t.match(await alert.textContent(), /code insufficient_funds/);
    const after = await api('GET', `/v1/billing/invoices/${unpaid}`);
    t.match(after, { status: 'open', attempt_count: 1 }, 'unpaid, one more attempt counted');
    await waitUntil(
      async () => (await page.textContent('.facts'))!.includes('payment attempts1'),
      'the page to show the attempt',
    );
  });

  await t.test('a failed webhook delivery is retried from the delivery log', async (t) => {
    receiver.on('/hooks/meterline', (n) => (n === 1 ? 500 : 200));
    await page.goto(`${base}/console#/webhooks`);
    await page.fill('input[name="url"]', receiver.url('/hooks/meterline'));
    for (const ev of ['invoice.created', 'invoice.paid', 'payment.failed'])
      await page.uncheck(`input[name="events"][value="${ev}"]`);
    await page.check('input[name="events"][value="subscription.updated"]');
    await page.click('button:has-text("Create webhook")');
    await page.waitForSelector('[data-testid="webhook-secret"]');
    const [hook] = (await api('GET', '/v1/webhooks')).data;
    await page.goto(`${base}/console#/webhooks/${hook.id}`);
    await page.waitForSelector('text=No deliveries yet.');

    await api('PATCH', `/v1/subscriptions/${sub.id}`, { status: 'canceled' }); // emits subscription.updated
    const refreshUntil = async (selector: string, what: string) =>
      waitUntil(
        async () => {
          await page.click('section:has(h2:has-text("Delivery log")) button:has-text("Refresh")');
          return (await page.locator(selector).count()) > 0;
        },
        what,
        30_000,
        250,
      );
    await refreshUntil('tr[data-status="failed"]', 'the failed first attempt in the log');
    const failed = page.locator('tr[data-status="failed"]');
    t.match(
      await failed.textContent(),
      /subscription\.updated[\s\S]*500[\s\S]*\d+ ms/,
      'event, response status and duration',
    );

    await failed.locator('button:has-text("Retry")').click();
    await page.waitForSelector('[role="status"]:has-text("sent again")');
    await refreshUntil('tr[data-status="succeeded"]', 'the retried attempt to succeed');
    const sent = receiver.at('/hooks/meterline');
    t.equal(sent.length, 2, 'the receiver got the event twice');
    t.equal(sent[1]!.headers['webhook-id'], sent[0]!.headers['webhook-id'], 'same event id: receivers dedupe on it');
    t.match(await page.textContent('tr[data-status="succeeded"]'), /subscription\.updated[\s\S]*200/);
    await screenshot(page, 'webhook-deliveries');
  });

  t.same(
    consoleErrors.filter((e) => !/status of 402/.test(e)),
    [],
    'no console errors beyond the failed charge the test provoked',
  );
});
