import t from 'tap';
import type { Page } from 'playwright-core';
import { waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, deploymentMeter } from '../fixtures/operator.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';
import { startConsumer } from '../integration/ingest-helpers.js';

/**
 * The console's entitlements page (issue 28, docs/entitlements.md), in headless Chromium against the whole api and
 * the usage consumer: an operator entitles a customer from the form; the customer, signed in as one of its own
 * people, sees its entitlement with the balance its usage left.
 */
/** Opens the entitlements page again (a hash change: the page reloads its data without a new sign-in). */
async function reopen(page: Page): Promise<void> {
  await page.evaluate(() => (location.hash = '#/meters'));
  await page.waitForSelector('table[data-testid="meters"], .empty');
  await page.evaluate(() => (location.hash = '#/entitlements'));
  await page.waitForSelector('tr[data-feature="gpt-4.calls"] [data-testid="access"]:not(:empty)');
}

t.test('web console: an operator entitles a customer, the customer sees its balance', async (t) => {
  const world = await startConsoleApi(t);
  await startConsumer(t, world.config, { maxWaitMs: 100 });
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Acme Operator' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, operator.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const [customer] = await createCustomers(base, operator.tokens.admin, 1, 'console-ent');
  const person = await api('POST', `/v1/customers/${customer!.id}/users`, { email: 'ann@globex.example' });
  const meter = await deploymentMeter(base, operator.tokens.admin, { name: 'model calls', aggregation: 'sum' });

  await t.test('the operator creates a metered entitlement from the form', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/entitlements');
    await page.waitForSelector('form[aria-label="create entitlement"]');
    // The customer by name and external id, not a typed cus_ id.
    await page.selectOption('select[name="customer_id"]', customer!.id);
    await page.fill('input[name="feature"]', 'gpt-4.calls');
    await page.selectOption('select[name="meter_id"]', meter.id);
    await page.fill('input[name="limit"]', '1000');
    await page.selectOption('select[name="period"]', 'month');
    await page.click('button:has-text("Create entitlement")');
    await page.waitForSelector('tr[data-feature="gpt-4.calls"]');
    const [made] = (await api('GET', `/v1/entitlements?customer_id=${customer!.id}`)).data;
    t.match(made, {
      feature: 'gpt-4.calls',
      type: 'metered',
      meter_id: meter.id,
      limit: 1000,
      period: 'month',
      overage: 'block',
    });
    // Every api answers checks from its own table, reloaded within half a second of the change.
    await waitUntil(
      async () => {
        await reopen(page);
        return (await page.textContent('tr[data-feature="gpt-4.calls"] [data-testid="access"]')) === 'yes';
      },
      'the new entitlement gives access',
      30_000,
      250,
    );
    await screenshot(page, 'entitlements-operator');
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('the customer sees its entitlement with its balance', async (t) => {
    await waitForIngressMeter(base, operator.tokens.write, meter.id);
    const r = await callJson(base, operator.tokens.admin, 'POST', `/v1/meters/${meter.id}/usage`, [
      { value: 600, timestamp: new Date().toISOString(), customer: customer!.externalId },
      { value: 399, timestamp: new Date().toISOString(), customer: customer!.externalId },
    ]);
    t.equal(r.status, 202);
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, { email: 'ann@globex.example', password: person.password }, '#/entitlements');
    t.equal(await page.locator('form[aria-label="create entitlement"]').count(), 0, 'no form for a customer');
    await waitUntil(
      async () => {
        await reopen(page);
        return (await page.textContent('tr[data-feature="gpt-4.calls"] [data-testid="usage"]')) === '999';
      },
      'the usage shows',
      30_000,
      250,
    );
    t.equal(await page.textContent('tr[data-feature="gpt-4.calls"] [data-testid="balance"]'), '1');
    t.equal(await page.textContent('tr[data-feature="gpt-4.calls"] [data-testid="access"]'), 'yes');
    await screenshot(page, 'entitlements-customer');
    t.same(consoleErrors, [], 'no console errors');
  });
});
