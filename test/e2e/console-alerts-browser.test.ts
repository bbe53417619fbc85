import t from 'tap';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { launchBrowser, signInToConsole, startConsoleApi } from '../fixtures/console.js';

/**
 * Alerts in the console (docs/alerts.md) in headless Chromium against the whole api: an operator sets a usage
 * alert on a customer from the Alerts page; the customer, signed in, sees the alert on itself (and nothing of the
 * operator's deployment-wide alert) and deletes it.
 */
t.test('web console: an operator sets an alert, the customer sees and deletes it', async (t) => {
  const world = await startConsoleApi(t);
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Operator' });
  const customer = await createTestAccount(world.infra, { name: 'Customer Ltd' });
  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await callJson(base, token, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const meter = await api(operator.tokens.admin, 'POST', '/v1/meters', {
    name: 'Tokens',
    unit: 'tokens',
    aggregation: 'sum',
    scope: 'deployment',
  });
  const wide = await api(operator.tokens.admin, 'POST', '/v1/alerts', { meter_id: meter.id, thresholds: [1000000] });

  await t.test('the operator sets an alert on the customer', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/alerts');
    await page.waitForSelector(`tr[data-alert-id="${wide.id}"]`);
    t.match(await page.textContent(`tr[data-alert-id="${wide.id}"]`), /every customer[\s\S]*usage of Tokens/);
    // Customers are chosen and shown by name, never by a raw cus_ id (issue 48).
    await page.selectOption('select[name="customer_id"]', customer.customerId);
    await page.selectOption('select[name="meter_id"]', meter.id);
    await page.fill('input[name="thresholds"]', '500, 100.5');
    await page.click('form[aria-label="set an alert"] button[type="submit"]');
    await page.waitForSelector('table[data-testid="alerts"] tr:nth-child(2)');
    const made = (await api(operator.tokens.admin, 'GET', `/v1/alerts?customer_id=${customer.customerId}`)).data;
    t.equal(made.length, 1);
    t.same([made[0].meter_id, made[0].thresholds], [meter.id, [100.5, 500]], 'stored exactly, ascending');
    const row = (await page.textContent(`tr[data-alert-id="${made[0].id}"]`)) ?? '';
    t.match(row, /Customer Ltd/, 'the alert names its customer');
    t.notMatch(row, customer.customerId, 'by name, not by id');
    t.same(consoleErrors, []);
  });

  await t.test('the customer sees the alert on itself and deletes it', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, customer, '#/alerts');
    await page.waitForSelector('table[data-testid="alerts"]');
    const rows = await page.$$eval('table[data-testid="alerts"] tbody tr', (trs) =>
      trs.map((tr) => tr.getAttribute('data-alert-id')),
    );
    const own = (await api(customer.tokens.read, 'GET', '/v1/alerts')).data;
    t.same(rows, [own[0].id], 'its own alert only, not the deployment-wide one');
    t.match(await page.textContent('table[data-testid="alerts"]'), /usage of Tokens[\s\S]*100\.5, 500/);
    await page.click(`tr[data-alert-id="${own[0].id}"] button.danger`);
    await page.waitForSelector('text=No alerts yet.');
    t.equal((await callJson(base, customer.tokens.read, 'GET', `/v1/alerts/${own[0].id}`)).status, 404);
    t.same(consoleErrors, []);
  });
});
