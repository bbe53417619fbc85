import t from 'tap';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { launchBrowser, signInToConsole, startConsoleApi } from '../fixtures/console.js';

/**
 * The console's audit log page (issue 47, docs/audit.md), in headless Chromium against the whole api: an operator
 * signed in on the console sees the changes made through the API, filters them by resource, and sees who made them.
 */
t.test('web console: the audit log page lists and filters the changes', async (t) => {
  const world = await startConsoleApi(t);
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Acme Operator' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, operator.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const product = await api('POST', '/v1/products', { name: 'Team plan', price: 20, currency: 'USD' });
  await api('PATCH', `/v1/products/${product.id}`, { price: 25 });
  const rate = await api('POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false });

  const { page, consoleErrors } = await launchBrowser(t);
  await signInToConsole(page, base, operator, '#/audit');
  await page.waitForSelector('table[data-testid="audit-events"] tr[data-audit-id]');
  const rows = page.locator('table[data-testid="audit-events"] tbody tr');
  t.equal(await rows.count(), 3, 'the three changes');
  t.match(await rows.nth(0).textContent(), new RegExp(`tax_rate.*${rate.id}.*create.*POST /v1/tax_rates`));
  t.match(
    await rows.nth(1).textContent(),
    /product.*update.*PATCH \/v1\/products\/:product_id.*price: "20\.0+" → "25\.0+"/,
  );

  await page.fill('input[name="resource"]', product.id);
  await page.click('button:has-text("Filter")');
  await page.waitForFunction(
    () => document.querySelectorAll('table[data-testid="audit-events"] tbody tr').length === 2,
  );
  const texts = await rows.allTextContents();
  t.ok(
    texts.every((x) => x.includes(product.id)),
    'only the product’s changes',
  );
  t.ok(
    texts.every((x) => x.includes(operator.userId)),
    'each names the user who made it',
  );
  t.equal(await page.locator('nav a[href="#/audit"]').count(), 1, 'the Audit log page is in the navigation');
  t.same(consoleErrors, [], 'no console errors');
});
