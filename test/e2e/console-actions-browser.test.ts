import t from 'tap';
import { waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';
import { startDispatcher } from '../integration/webhook-delivery-helpers.js';

/**
 * The console's actions on webhooks (docs/design.md §12) in headless Chromium against the whole api and the webhook
 * dispatcher: a failed delivery retried from the delivery log until a real local receiver accepts it.
 */
t.test('web console: retry a webhook delivery', async (t) => {
  const world = await startConsoleApi(t);
  await startDispatcher(t, world.config);
  const receiver = await startReceiver(t);
  const { base } = world;
  const user = await createTestAccount(world.infra, { operator: true, name: 'Acme Billing' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, user.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  const plan = await api('POST', '/v1/products', { name: 'Team plan', price: 99, currency: 'USD' });

  const { page, consoleErrors } = await launchBrowser(t);
  await signInToConsole(page, base, user, '#/webhooks');

  await t.test('a failed webhook delivery is retried from the delivery log', async (t) => {
    receiver.on('/hooks/meterline', (n) => (n === 1 ? 500 : 200));
    await page.goto(`${base}/console#/webhooks`);
    await page.fill('input[name="url"]', receiver.url('/hooks/meterline'));
    await page.check('input[name="events"][value="subscription.updated"]');
    await page.click('button:has-text("Create webhook")');
    await page.waitForSelector('[data-testid="webhook-secret"]');
    const [hook] = (await api('GET', '/v1/webhooks')).data;
    await page.goto(`${base}/console#/webhooks/${hook.id}`);
    await page.waitForSelector('text=No deliveries yet.');

    await api('POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] }); // emits subscription.updated, the account's only event
    const refreshUntil = async (selector: string, what: string) =>
      waitUntil(async () => {
        await page.click('section:has(h2:has-text("Delivery log")) button:has-text("Refresh")');
        return (await page.locator(selector).count()) > 0;
      }, what, 30_000, 250);
    await refreshUntil('tr[data-status="failed"]', 'the failed first attempt in the log');
    const failed = page.locator('tr[data-status="failed"]');
    t.match(await failed.textContent(), /subscription\.updated[\s\S]*500[\s\S]*\d+ ms/, 'event, response status and duration');

    await failed.locator('button:has-text("Retry")').click();
    await page.waitForSelector('[role="status"]:has-text("sent again")');
    await refreshUntil('tr[data-status="succeeded"]', 'the retried attempt to succeed');
    const sent = receiver.at('/hooks/meterline');
    t.equal(sent.length, 2, 'the receiver got the event twice');
    t.equal(sent[1]!.headers['webhook-id'], sent[0]!.headers['webhook-id'], 'same event id: receivers dedupe on it');
    t.match(await page.textContent('tr[data-status="succeeded"]'), /subscription\.updated[\s\S]*200/);
    await screenshot(page, 'webhook-deliveries');
  });

  t.same(consoleErrors, [], 'no console errors');
});
