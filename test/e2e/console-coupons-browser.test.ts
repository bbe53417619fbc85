import t from 'tap';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers } from '../fixtures/operator.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';

/**
 * The console's coupons (issue 29 item 4, docs/coupons.md), in headless Chromium against the whole api: an operator
 * creates a coupon from the Coupons page and sees it listed; once it is applied to a customer's subscription, the
 * customer, signed in as one of its people, sees the discount on its subscriptions page — and no Coupons page.
 */
t.test('web console: an operator makes a coupon, the customer sees its discount', async (t) => {
  const world = await startConsoleApi(t);
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Acme Operator' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, operator.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const [customer] = await createCustomers(base, operator.tokens.admin, 1, 'console-coupons');
  const person = await api('POST', `/v1/customers/${customer!.id}/users`, { email: 'bea@globex.example' });
  const plan = await api('POST', '/v1/products', { name: 'Team plan', price: 20, currency: 'USD' });
  const sub = await api('POST', '/v1/subscriptions', { customer_id: customer!.id, items: [{ product_id: plan.id }] });

  await t.test('the operator creates a coupon from the form and sees it listed', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/coupons');
    await page.waitForSelector('form[aria-label="create coupon"]');
    await page.fill('input[name="name"]', 'LOYAL25');
    await page.fill('input[name="value"]', '12.5');
    await page.selectOption('select[name="duration"]', 'repeating');
    await page.fill('input[name="duration_in_periods"]', '3');
    await page.fill('input[name="max_redemptions"]', '100');
    await page.click('button:has-text("Create coupon")');
    await page.waitForSelector('table[data-testid="coupons"] tr[data-coupon-id]');
    const [made] = (await api('GET', '/v1/coupons')).data;
    t.match(made, {
      name: 'LOYAL25',
      percent_off: 12.5,
      duration: 'repeating',
      duration_in_periods: 3,
      max_redemptions: 100,
      times_redeemed: 0,
    });
    const row = `tr[data-coupon-id="${made.id}"]`;
    t.equal(await page.textContent(`${row} [data-testid="terms"]`), '12.5 % off');
    t.equal(await page.textContent(`${row} [data-testid="duration"]`), 'for 3 periods');
    t.equal(await page.textContent(`${row} [data-testid="redeemed"]`), '0 of 100');
    await screenshot(page, 'coupons-operator');
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('the customer sees the discount on its subscription, and no Coupons page', async (t) => {
    const [coupon] = (await api('GET', '/v1/coupons')).data;
    await api('PATCH', `/v1/subscriptions/${sub.id}`, { coupon_id: coupon.id });
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, { email: 'bea@globex.example', password: person.password }, '#/subscriptions');
    const cell = `tr[data-subscription-id="${sub.id}"] [data-testid="discount"]`;
    await page.waitForSelector(cell);
    t.match(await page.textContent(cell), /^LOYAL25 — 12\.5 % off, for 3 periods, from \d{4}-\d{2}-01$/);
    t.equal(await page.locator('nav a[href="#/coupons"]').count(), 0, 'no Coupons page in a customer’s navigation');
    await screenshot(page, 'coupons-customer');
    t.same(consoleErrors, [], 'no console errors');
  });
});
