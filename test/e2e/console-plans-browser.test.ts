import t from 'tap';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { launchBrowser, signInToConsole, startConsoleApi } from '../fixtures/console.js';

/**
 * Plans in the console (docs/plans.md) in headless Chromium against the whole api: an operator makes a plan from
 * the Plans page and reads its versions and their items; a customer subscribed to the plan sees its plan's name
 * and version, its interval and its trial's end on its subscription.
 */
t.test('web console: an operator makes a plan and reads its versions; a customer sees its plan', async (t) => {
  const world = await startConsoleApi(t);
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Operator' });
  const customer = await createTestAccount(world.infra, { name: 'Customer' });
  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await callJson(base, token, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const seat = (await api(operator.tokens.admin, 'POST', '/v1/products', { name: 'Seat', price: 10, currency: 'USD' }))
    .id;
  const calls = (
    await api(operator.tokens.admin, 'POST', '/v1/products', {
      name: 'Calls',
      price: 0.01,
      currency: 'USD',
      pricing: 'metered',
    })
  ).id;
  const meter = await api(operator.tokens.admin, 'POST', '/v1/meters', {
    name: 'API calls',
    unit: 'calls',
    aggregation: 'sum',
    scope: 'deployment',
  });

  let planId = '';
  await t.test('the operator makes a plan and reads its versions', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/plans');
    await page.waitForSelector('text=No plans yet.');
    await page.fill('input[name="name"]', 'Team');
    await page.fill('input[name="currency"]', 'USD');
    await page.selectOption('select[name="interval"]', 'quarter');
    await page.fill('input[name="trial_days"]', '14');
    await page.selectOption('select[name="product_id"]', [seat, calls]);
    await page.selectOption('select[name="meter_id"]', meter.id);
    await page.click('form[aria-label="create a plan"] button[type="submit"]');
    await page.waitForSelector('table[data-testid="plans"] tbody tr');
    const plans = (await api(operator.tokens.admin, 'GET', '/v1/plans')).data;
    t.equal(plans.length, 1);
    planId = plans[0].id;
    t.same(
      [plans[0].name, plans[0].interval, plans[0].trial_days, plans[0].items],
      [
        'Team',
        'quarter',
        14,
        [
          { product_id: calls, meter_id: meter.id },
          { product_id: seat, meter_id: null },
        ],
      ],
      'stored as the form said (in the list’s order, newest product first)',
    );
    t.match(
      await page.textContent(`tr[data-plan-id="${planId}"]`),
      /Team[\s\S]*every quarter in USD[\s\S]*14-day trial/,
    );

    await api(operator.tokens.admin, 'POST', `/v1/plans/${planId}/versions`, {
      items: [{ product_id: seat, quantity: 3 }],
    });
    // Back to the page (a reload would sign in again): the list reads the new latest version.
    await page.evaluate(() => (location.hash = '#/products'));
    await page.waitForSelector('table[data-testid="products"]');
    await page.evaluate(() => (location.hash = '#/plans'));
    await page.waitForSelector(`tr[data-plan-id="${planId}"]`);
    await page.click(`tr[data-plan-id="${planId}"] button`);
    await page.waitForSelector('table[data-testid="plan-versions"] tr[data-version="1"]');
    t.match(await page.textContent('tr[data-version="2"]'), /Seat × 3/);
    t.match(await page.textContent('tr[data-version="1"]'), /Calls · metered by API calls; Seat/);
    t.same(consoleErrors, []);
  });

  await t.test('the customer sees its plan, version, interval and trial on its subscription', async (t) => {
    const sub = await api(customer.tokens.write, 'POST', '/v1/subscriptions', { plan_id: planId, plan_version: 2 });
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, customer, '#/subscriptions');
    // The plan's name arrives with the plan list, which may answer after the subscriptions: until then the id shows.
    await page.waitForSelector('[data-testid="subscription-plan"]:has-text("plan Team")', { timeout: 15_000 });
    t.equal((await page.textContent('[data-testid="subscription-plan"]'))?.trim(), 'plan Team · version 2');
    // The plan's terms: billed every quarter, its 14-day trial running.
    t.equal((await page.textContent('[data-testid="subscription-terms"]'))?.trim(), 'every quarter');
    const trialEnd = `${sub.trial_end.slice(0, 10)} ${sub.trial_end.slice(11, 16)} UTC`;
    t.equal((await page.textContent('[data-testid="trial-end"]'))?.trim(), `trial until ${trialEnd}`);
    t.equal(Date.parse(sub.trial_end) - Date.parse(sub.created_at), 14 * 86_400_000, 'the plan’s 14 days');
    t.same(consoleErrors, []);
  });
});
