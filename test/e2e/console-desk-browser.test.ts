import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { createTestAccount } from '../fixtures/auth.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';

const PNG_LOGO = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/**
 * Issue 48 items 2 and 3 in headless Chromium against the whole api: a billing team's day in the operator console —
 * the seller and its logo set on the Seller page; every customer's invoices, named by customer and filtered by it,
 * one opened, voided and credited; a customer subscribed and a coupon applied and removed on the Subscriptions page
 * — and a customer's console offering only what the customer may do (no Deactivate on a deployment meter).
 */
t.test('web console: the operator’s desk', async (t) => {
  const world = await startConsoleApi(t);
  const { base } = world;
  const operator = await createTestAccount(world.infra, { operator: true, name: 'Acme Billing' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, operator.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const globex = await api('POST', '/v1/customers', { name: 'Globex', external_id: 'globex' });
  const initech = await api('POST', '/v1/customers', { name: 'Initech', external_id: 'initech' });
  const plan = await api('POST', '/v1/products', { name: 'Team plan', price: 20, currency: 'USD' });
  const coupon = await api('POST', '/v1/coupons', { name: 'LOYAL25', percent_off: 25, duration: 'forever' });
  const sub = await api('POST', '/v1/subscriptions', { customer_id: globex.id, items: [{ product_id: plan.id }] });
  const invoice = (c: { id: string; account_id: string }, status: 'open' | 'paid', month: string) =>
    insertInvoice(world.infra.pg, {
      accountId: c.account_id,
      customerId: c.id,
      subscriptionId: sub.id,
      amount: '20',
      periodStart: `2026-${month}-01`,
      periodEnd: `2026-${month}-28`,
      status,
      paidAt: status === 'paid' ? `2026-${month}-28T02:00:00Z` : null,
      lines: [{ product_id: plan.id, description: 'Team plan', quantity: '1', unit_price: '20', amount: '20' }],
    });
  const globexOpen = await invoice(globex, 'open', '02');
  const globexPaid = await invoice(globex, 'paid', '01');
  const initechOpen = await invoice(initech, 'open', '03');

  await t.test('the Seller page sets the seller and its logo', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/seller');
    await page.waitForSelector('form[aria-label="seller settings"]');
    await page.fill('input[name="legal_name"]', 'Acme Billing Ltd');
    await page.fill('input[name="line1"]', '1 Market Street');
    await page.fill('input[name="postal_code"]', '94105');
    await page.fill('input[name="city"]', 'San Francisco');
    await page.fill('input[name="region"]', 'CA');
    await page.fill('input[name="country"]', 'us');
    await page.fill('input[name="tax_id_type"]', 'us_ein');
    await page.fill('input[name="tax_id_value"]', '12-3456789');
    await page.fill('input[name="support_email"]', 'help@acme.example');
    await page.fill('input[name="invoice_footer"]', 'Thank you for your business.');
    await page.click('button:has-text("Save seller")');
    await page.waitForSelector('.notice:has-text("Saved")');
    await page.setInputFiles('input[name="logo"]', {
      name: 'logo.png',
      mimeType: 'image/png',
      buffer: Buffer.from(PNG_LOGO, 'base64'),
    });
    await page.waitForSelector('img[data-testid="logo"]');
    t.match(await api('GET', '/v1/seller_settings'), {
      legal_name: 'Acme Billing Ltd',
      address: { line1: '1 Market Street', city: 'San Francisco', region: 'CA', postal_code: '94105', country: 'US' },
      tax_ids: [{ type: 'us_ein', value: '12-3456789' }],
      support_email: 'help@acme.example',
      invoice_footer: 'Thank you for your business.',
      logo: `data:image/png;base64,${PNG_LOGO}`,
    });
    t.equal(await page.inputValue('input[name="legal_name"]'), 'Acme Billing Ltd', 'the form shows what is saved');
    await screenshot(page, 'seller-settings');
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('every customer’s invoices by name; filtered; one opened, voided and credited', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    page.on('dialog', (d) => void d.accept());
    await signInToConsole(page, base, operator, '#/invoices');
    await page.waitForSelector('table[data-testid="invoices"]');
    const rows = async () =>
      page.$$eval('table[data-testid="invoices"] tbody tr', (trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-invoice-id'),
          tr.querySelector('[data-testid="customer"]')?.textContent,
        ]),
      );
    t.same(
      (await rows()).sort(),
      [
        [globexOpen, 'Globex (globex)'],
        [globexPaid, 'Globex (globex)'],
        [initechOpen, 'Initech (initech)'],
      ].sort(),
      'both customers’ invoices, each named by its customer',
    );
    /** Waits until the list shows exactly these invoices (a filter's answer replaces the last one's). */
    const shown = (expected: string[]) =>
      page.waitForFunction(
        (want) =>
          Array.from(document.querySelectorAll('table[data-testid="invoices"] tbody tr'))
            .map((tr) => tr.getAttribute('data-invoice-id'))
            .sort()
            .join() === want,
        [...expected].sort().join(),
      );
    await screenshot(page, 'invoices-operator');
    await page.selectOption('form[aria-label="filter invoices"] select[name="customer"]', initech.id);
    await shown([initechOpen]);
    t.same(await rows(), [[initechOpen, 'Initech (initech)']], 'one customer’s');
    await page.selectOption('form[aria-label="filter invoices"] select[name="customer"]', '');
    await page.selectOption('form[aria-label="filter invoices"] select[name="status"]', 'paid');
    await shown([globexPaid]);
    t.same(await rows(), [[globexPaid, 'Globex (globex)']], 'by status');
    await page.selectOption('form[aria-label="filter invoices"] select[name="status"]', '');
    await page.fill('input[name="period_from"]', '2026-02-01');
    await page.click('form[aria-label="filter invoices"] button:has-text("Filter")');
    await shown([globexOpen, initechOpen]);
    t.same((await rows()).map((r) => r[0]).sort(), [globexOpen, initechOpen].sort(), 'by period');

    // Open Initech's invoice: its customer by name; void it.
    await page.click(`tr[data-invoice-id="${initechOpen}"] a`);
    await page.waitForSelector('[data-testid="invoice-customer"]');
    t.equal(await page.textContent('[data-testid="invoice-customer"]'), 'Initech (initech)');
    await page.click('button:has-text("Void")');
    await page.waitForSelector('.badge-void');
    t.equal((await api('GET', `/v1/billing/invoices/${initechOpen}`)).status, 'void', 'voided through the API');

    // Globex's open invoice: a credit note.
    await page.goto(`${base}/console#/invoices/${globexOpen}`);
    await page.waitForSelector('form[aria-label="credit note"]');
    await page.fill('form[aria-label="credit note"] input[name="amount"]', '5.50');
    await page.fill('form[aria-label="credit note"] input[name="reason"]', 'Outage on 12 January');
    await page.click('button:has-text("Issue credit note")');
    await page.waitForSelector('.notice:has-text("Credit note"), .error');
    t.equal(await page.locator('.error').count(), 0, (await page.locator('.error').allTextContents()).join());
    t.match(await page.textContent('.notice'), /Credit note \S+ of 5\.50 USD issued\./);
    const notes = await api('GET', `/v1/billing/credit-notes?invoice_id=${globexOpen}`);
    t.match(notes.data, [{ amount: 5.5, reason: 'Outage on 12 January' }]);
    t.ok(await page.isVisible('button:has-text("Download PDF")'), 'the PDF is one click away');
    await screenshot(page, 'invoice-operator');
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('subscribe a customer; apply and remove a coupon', async (t) => {
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/subscriptions');
    await page.waitForSelector(`tr[data-subscription-id="${sub.id}"]`);
    t.equal(await page.textContent(`tr[data-subscription-id="${sub.id}"] [data-testid="customer"]`), 'Globex (globex)');
    await page.selectOption('form[aria-label="subscribe"] select[name="customer"]', initech.id);
    await page.check(`form[aria-label="subscribe"] input[type="checkbox"]`);
    await page.click('button:has-text("Create subscription")');
    await page.waitForFunction(
      () => document.querySelectorAll('table[data-testid="subscriptions"] tbody tr').length === 2,
    );
    const initechSubs = await api('GET', `/v1/subscriptions?customer_id=${initech.id}`);
    t.match(initechSubs.data, [{ customer_id: initech.id, items: [{ product_id: plan.id }], managed_by: 'operator' }]);

    const row = `tr[data-subscription-id="${sub.id}"]`;
    await page.selectOption(`${row} select[name="coupon_id"]`, coupon.id);
    await page.click(`${row} button:has-text("Apply")`);
    await page.waitForSelector(`${row} button:has-text("Remove coupon")`);
    t.match(await page.textContent(`${row} [data-testid="discount"]`), /^LOYAL25 — 25 % off/);
    t.match((await api('GET', `/v1/subscriptions/${sub.id}`)).discount, { coupon: { id: coupon.id } });
    await screenshot(page, 'subscriptions-operator');
    await page.click(`${row} button:has-text("Remove coupon")`);
    await page.waitForSelector(`${row} button:has-text("Apply")`);
    t.equal((await api('GET', `/v1/subscriptions/${sub.id}`)).discount, null, 'removed');
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('a customer’s console: no Deactivate on a deployment meter, no operator pages', async (t) => {
    const meter = await api('POST', '/v1/meters', {
      name: 'API calls',
      unit: 'requests',
      aggregation: 'sum',
      scope: 'deployment',
    });
    const person = await api('POST', `/v1/customers/${globex.id}/users`, { email: 'ap@globex.example' });
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, { email: 'ap@globex.example', password: person.password }, '#/meters');
    await page.waitForSelector(`text=${meter.name}`);
    t.equal(await page.locator('button:has-text("Deactivate")').count(), 0, 'nothing the API would refuse');
    for (const nav of ['#/seller', '#/customers', '#/coupons'])
      t.equal(await page.locator(`nav a[href="${nav}"]`).count(), 0, `no ${nav}`);
    await page.goto(`${base}/console#/invoices`);
    await page.waitForSelector('table[data-testid="invoices"]');
    t.equal(await page.locator('th:has-text("customer")').count(), 0, 'its own invoices, no customer column');
    t.equal(await page.locator('table[data-testid="invoices"] tbody tr').count(), 2, 'its two invoices');
    await screenshot(page, 'meters-customer');

    // Subscribing itself and canceling the operator's subscription: offered only when portal settings allow it.
    await page.goto(`${base}/console#/subscriptions`);
    await page.waitForSelector(`tr[data-subscription-id="${sub.id}"]`);
    t.equal(
      await page.locator('form[aria-label="subscribe"]').count(),
      1,
      'self-serve on (the default): Subscribe offered',
    );
    t.equal(
      await page.locator(`tr[data-subscription-id="${sub.id}"] button:has-text("Cancel")`).count(),
      0,
      'the operator’s subscription: no Cancel while customer_can_cancel is off',
    );
    await api('PATCH', '/v1/portal_settings', { self_serve_subscriptions: false, customer_can_cancel: true });
    // Away and back within the console (a reload would sign out: the session lives in the page's memory).
    await page.goto(`${base}/console#/meters`);
    await page.goto(`${base}/console#/subscriptions`);
    await page.waitForSelector(`tr[data-subscription-id="${sub.id}"] button:has-text("Cancel")`);
    t.equal(await page.locator('form[aria-label="subscribe"]').count(), 0, 'self-serve off: no Subscribe form');
    await screenshot(page, 'subscriptions-customer');
    await api('PATCH', '/v1/portal_settings', { self_serve_subscriptions: true, customer_can_cancel: false });
    t.same(consoleErrors, [], 'no console errors');
  });

  await t.test('meters told apart by their keys', async (t) => {
    const a = await api('POST', '/v1/meters', { name: 'Tokens', unit: 'tokens', aggregation: 'sum', key: 'tokens_in' });
    const b = await api('POST', '/v1/meters', {
      name: 'Tokens',
      unit: 'tokens',
      aggregation: 'sum',
      key: 'tokens_out',
    });
    const { page, consoleErrors } = await launchBrowser(t);
    await signInToConsole(page, base, operator, '#/entitlements');
    await page.waitForSelector(`select[name="meter_id"] option[value="${a.id}"]`, { state: 'attached' });
    const options = await page.$$eval('select[name="meter_id"] option', (os) =>
      os.map((o) => [o.getAttribute('value'), o.textContent]),
    );
    t.same(
      options.filter(([v]) => v === a.id || v === b.id).map(([, text]) => text),
      ['Tokens (tokens_out)', 'Tokens (tokens_in)'],
      'two meters of one name, each shown with its key',
    );
    await page.goto(`${base}/console#/meters`);
    await page.waitForSelector(`tr[data-meter-id="${a.id}"]`);
    t.match(await page.textContent(`tr[data-meter-id="${a.id}"]`), 'Tokens (tokens_in)');
    await screenshot(page, 'meters-keys');
    t.same(consoleErrors, [], 'no console errors');
  });
});
