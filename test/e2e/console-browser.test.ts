import t from 'tap';
import { readFile } from 'node:fs/promises';
import { waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { readPdf } from '../fixtures/pdf.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';
import { startConsumer } from '../integration/ingest-helpers.js';

/**
 * The web console (docs/design.md §12) in Debian's headless Chromium against the whole api, the usage consumer,
 * Postgres, NATS and ClickHouse: sign in through the real OAuth pages, then use every page the way a
 * customer would. Assertions read the DOM (and the chart's own data), never pixels. Screenshots go to
 * docs/screenshots/ for docs/console.md.
 */
t.test('web console in headless Chromium', async (t) => {
  // Short-lived access tokens: the page must refresh them while the test runs (at 48 s, a fifth before expiry).
  const world = await startConsoleApi(t, { ACCESS_TOKEN_TTL_SECONDS: '60' });
  await startConsumer(t, world.config, { maxWaitMs: 100 });
  const { base } = world;
  // An operator: the products page shows its admin forms. The test's own tokens post usage "from an emitter".
  const user = await createTestAccount(world.infra, { operator: true, name: 'Acme Analytics' });
  const api = (method: string, path: string, body?: unknown) => callJson(base, user.tokens.admin, method, path, body);
  const { context, page, consoleErrors } = await launchBrowser(t);
  const tokenCalls: { grant: string | null; status: number; scope?: string }[] = [];
  page.on('response', async (res) => {
    const path = new URL(res.url()).pathname;
    if (path === '/oauth/revoke') tokenCalls.push({ grant: 'revoke', status: res.status() });
    if (path !== '/oauth/token') return;
    const grant = new URLSearchParams(res.request().postData() ?? '').get('grant_type');
    tokenCalls.push({
      grant,
      status: res.status(),
      scope: ((await res.json().catch(() => ({}))) as { scope?: string }).scope,
    });
  });

  await t.test('sign in → consent → meters page; tokens stay in memory', async (t) => {
    const html = await fetch(`${base}/console`);
    t.match(
      html.headers.get('content-security-policy'),
      /script-src 'self'; .*connect-src 'self'.*frame-ancestors 'none'/,
    );
    t.equal(html.headers.get('cache-control'), 'no-store');
    t.match(
      await html.text(),
      `content="{&quot;client_id&quot;:&quot;cli_console&quot;,&quot;redirect_uri&quot;:&quot;${base}/console&quot;`,
    );
    t.equal((await fetch(`${base}/console/assets/nope.js`)).status, 404);
    await signInToConsole(page, base, user, '#/meters');
    t.equal(new URL(page.url()).hash, '#/meters', 'back on the route the sign-in started from');
    t.notOk(new URL(page.url()).searchParams.has('code'), 'the code left the address bar');
    t.match(await page.textContent('main h2'), 'Meters');
    t.match(await page.textContent('nav.sidebar'), 'scope: read write admin');
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    t.notMatch(stored, /eyJ/, 'no access token in web storage');
    t.equal(stored, '{}{}', 'nothing left in web storage after the sign-in');
    const cookies = await context.cookies(`${base}/console`);
    t.same(
      cookies.map((c) => c.name),
      [],
      'the console itself sets no cookie (the OAuth session cookie is scoped to /oauth)',
    );
  });

  let meterId = '';
  await t.test('create a meter, post usage through the API, the chart shows it', async (t) => {
    await page.fill('input[name="name"]', 'API requests');
    await page.fill('input[name="unit"]', 'requests');
    await page.selectOption('select[name="type"]', 'counter');
    await page.selectOption('select[name="aggregation"]', 'sum');
    await Promise.all([page.waitForURL(/#\/meters\/mtr_/), page.click('button:has-text("Create meter")')]);
    meterId = new URL(page.url()).hash.split('/')[2]!;
    t.match(meterId, /^mtr_/);
    await page.waitForSelector('main h2:has-text("Meter: API requests")');
    await page.waitForSelector('canvas[data-values]');
    const empty = JSON.parse((await page.getAttribute('canvas', 'data-values'))!) as number[];
    t.ok(empty.length >= 24 && empty.length <= 48, `hour windows over yesterday and today (${empty.length})`);
    t.ok(
      empty.every((v) => v === 0),
      'no usage yet',
    );

    await waitForIngressMeter(base, user.tokens.write, meterId);
    const now = Date.now();
    const hourAgo = new Date(now - 3_600_000).toISOString();
    const records = [
      { value: 5, timestamp: new Date(now - 60_000).toISOString(), id: 'req-1' },
      { value: 7.5, timestamp: new Date(now - 30_000).toISOString(), id: 'req-2' },
      { value: 2, timestamp: hourAgo, id: 'req-3' },
    ];
    const posted = await callJson(base, user.tokens.write, 'POST', `/v1/meters/${meterId}/usage`, records);
    t.equal(posted.status, 202);
    t.equal(posted.body.accepted, 3);

    // The page refreshes on demand; the consumer needs a moment to write the records to ClickHouse.
    let values: number[] = [];
    let labels: string[] = [];
    await waitUntil(
      async () => {
        await page.click('button:has-text("Refresh")');
        await page.waitForSelector('button:has-text("Refresh"):not([disabled])');
        values = JSON.parse((await page.getAttribute('canvas', 'data-values'))!);
        labels = JSON.parse((await page.getAttribute('canvas', 'data-labels'))!);
        return values.reduce((a, b) => a + b, 0) === 14.5;
      },
      'the chart to show the posted usage',
      30_000,
      250,
    );
    const label = (iso: string) => `${iso.slice(5, 10)} ${iso.slice(11, 13)}:00`;
    const at = (iso: string) => values[labels.indexOf(label(iso))];
    if (label(hourAgo) === label(records[0]!.timestamp)) t.equal(at(hourAgo), 14.5, 'all three records in this hour');
    else {
      t.equal(at(records[0]!.timestamp), 12.5, 'this hour: 5 + 7.5');
      t.equal(at(hourAgo), 2, 'the previous hour: 2');
    }
    t.equal(await page.textContent('[data-testid="usage-total"]'), '14.5');
    t.equal(await page.textContent('[data-testid="usage-count"]'), '3');
    await screenshot(page, 'meter-usage');

    // Day windows over the same range: one bar per day, the total unchanged.
    await page.selectOption('select[name="window"]', 'day');
    await waitUntil(
      async () => JSON.parse((await page.getAttribute('canvas', 'data-values'))!).length === 2,
      'day windows',
    );
    const days = JSON.parse((await page.getAttribute('canvas', 'data-values'))!) as number[];
    t.equal(
      days.reduce((a, b) => a + b, 0),
      14.5,
    );

    // A range the API would refuse is explained before asking it.
    await page.fill('input[name="start_date"]', new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10));
    await page.selectOption('select[name="window"]', 'hour');
    t.match(await page.textContent('[role="alert"]'), /Hour windows cover at most 7 days/);
  });

  await t.test('meters list: filter by status, deactivate', async (t) => {
    await page.goto(`${base}/console#/meters`);
    await page.waitForSelector(`tr[data-meter-id="${meterId}"]`);
    await screenshot(page, 'meters');
    await page.click(`tr[data-meter-id="${meterId}"] button:has-text("Deactivate")`);
    await page.waitForSelector(`tr[data-meter-id="${meterId}"] .badge-inactive`);
    t.equal((await api('GET', `/v1/meters/${meterId}`)).body.status, 'inactive', 'the API agrees');
    await page.selectOption('select[name="status"]', 'active');
    await page.waitForSelector('text=No meters with status active yet.');
    await page.selectOption('select[name="status"]', 'inactive');
    await page.waitForSelector(`tr[data-meter-id="${meterId}"]`);
    await page.click(`tr[data-meter-id="${meterId}"] button:has-text("Activate")`);
    await page.waitForSelector('text=No meters with status inactive yet.');
    t.equal((await api('GET', `/v1/meters/${meterId}`)).body.status, 'active');

    // Errors are shown, never a blank page: an unknown meter (the API's 404 detail) and an unknown page.
    await page.goto(`${base}/console#/meters/mtr_doesnotexist`);
    const missing = await page.waitForSelector('[role="alert"]');
    t.match(await missing.textContent(), /code not_found/);
    t.match(await missing.textContent(), /request \S+/, 'with the request id to look it up');
    await page.goto(`${base}/console#/nowhere`);
    t.match(await (await page.waitForSelector('[role="alert"]')).textContent(), 'There is no console page /nowhere.');
  });

  await t.test('payment methods: add a test card, a declined one shows the API detail, set default', async (t) => {
    await page.goto(`${base}/console#/payment-methods`);
    await page.waitForSelector('text=No card yet');
    await page.click('button:has-text("Add card")');
    await page.waitForSelector('table[data-testid="payment-methods"] >> text=•••• 4242');
    t.match(await page.textContent('table[data-testid="payment-methods"]'), /visa •••• 4242\s*default/);

    await page.selectOption('select:has(option[value="4000 0000 0000 0002"])', '4000 0000 0000 0002');
    await page.click('button:has-text("Add card")');
    const declined = await page.waitForSelector('[role="alert"]');
    t.match(await declined.textContent(), /declined/i, 'the API detail is shown');
    t.match(await declined.textContent(), /card_declined/, 'with its code');

    await page.selectOption('select:has(option[value="5555 5555 5555 4444"])', '5555 5555 5555 4444');
    await page.click('button:has-text("Add card")');
    await page.waitForSelector('text=•••• 4444');
    await page.click('button:has-text("Set as default")');
    await waitUntil(
      async () =>
        /mastercard •••• 4444\s*default/.test((await page.textContent('table[data-testid="payment-methods"]')) ?? ''),
      'the new default',
    );
    t.equal((await api('GET', '/v1/billing')).body.payment_method.last4, '4444', 'the API agrees');
    await screenshot(page, 'payment-methods');
  });

  let subscriptionId = '';
  await t.test('subscriptions: subscribe to a flat and a metered product', async (t) => {
    const plan = (await api('POST', '/v1/products', { name: 'Pro plan', price: 49.99, currency: 'USD' })).body;
    const calls = (
      await api('POST', '/v1/products', { name: 'API calls', price: 0.002, currency: 'USD', pricing: 'metered' })
    ).body;
    await page.goto(`${base}/console#/subscriptions`);
    await page.waitForSelector('text=No subscriptions yet.');
    await page.check(`label:has-text("${plan.name}") input`);
    await page.check(`label:has-text("${calls.name}") input`);
    await page.click('button:has-text("Create subscription")');
    await page.waitForSelector('table[data-testid="subscriptions"]');
    const list = (await api('GET', '/v1/subscriptions')).body.data;
    t.equal(list.length, 1);
    subscriptionId = list[0].id;
    t.same(list[0].items, [
      { product_id: plan.id, meter_id: null },
      { product_id: calls.id, meter_id: meterId },
    ]);
    t.match(
      await page.textContent('table[data-testid="subscriptions"]'),
      /Pro plan[\s\S]*API calls · metered by API requests/,
    );
    await screenshot(page, 'subscriptions');
  });

  await t.test('invoices: list, detail, PDF download', async (t) => {
    const sub = (await api('GET', `/v1/subscriptions/${subscriptionId}`)).body;
    const [plan, calls] = sub.items;
    const invoiceId = await insertInvoice(world.infra.pg, {
      accountId: user.accountId,
      customerId: user.customerId,
      subscriptionId,
      amount: '50.02',
      currency: 'USD',
      periodStart: '2026-10-01',
      periodEnd: '2026-10-31',
      attemptCount: 1,
      status: 'paid',
      paidAt: '2026-11-01T01:00:02Z',
      createdAt: '2026-11-01T01:00:00Z',
      lines: [
        { product_id: plan.product_id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' },
        {
          product_id: calls.product_id,
          meter_id: meterId,
          description: 'API calls',
          quantity: '14.5',
          unit_price: '0.002',
          amount: '0.03',
        },
      ],
    });
    await page.goto(`${base}/console#/invoices`);
    await page.waitForSelector(`a:has-text("${invoiceId}")`);
    t.match(await page.textContent('table[data-testid="invoices"]'), /2026-10-01 → 2026-10-31\s*paid\s*50\.02 USD/);
    await screenshot(page, 'invoices');
    await Promise.all([
      page.waitForURL(new RegExp(`#/invoices/${invoiceId}$`)),
      page.click(`a:has-text("${invoiceId}")`),
    ]);
    await page.waitForSelector('table[data-testid="invoice-lines"]');
    t.equal(await page.textContent('[data-testid="invoice-total"]'), '50.02 USD');
    t.match(
      await page.textContent('table[data-testid="invoice-lines"]'),
      /API calls[\s\S]*14\.5[\s\S]*0\.002 USD[\s\S]*0\.03 USD/,
    );
    await screenshot(page, 'invoice');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('button:has-text("Download PDF")'),
    ]);
    t.equal(download.suggestedFilename(), `${invoiceId}.pdf`);
    const pdf = await readFile((await download.path())!);
    const facts = readPdf(pdf);
    // The PDF names the invoice by its number, never by its internal id (issue 48).
    const { number } = (await api('GET', `/v1/billing/invoices/${invoiceId}`)).body;
    t.ok(number, 'the invoice has a number');
    t.match(facts.text, new RegExp(`Invoice number\\s+${number}\\b`), 'the PDF is this invoice');
    t.notMatch(facts.text, invoiceId, 'without its internal id');
    t.match(facts.text, /50\.02 USD/, 'with its total');
  });

  await t.test('webhooks: create (secret shown once), edit', async (t) => {
    await page.goto(`${base}/console#/webhooks`);
    await page.waitForSelector('text=No webhooks yet.');
    await page.fill('input[name="url"]', 'http://127.0.0.1:9/hooks/meterline');
    await page.click('button:has-text("Create webhook")');
    const secret = await page.waitForSelector('[data-testid="webhook-secret"]');
    t.match(await secret.textContent(), /^whsec_/);
    const [hook] = (await api('GET', '/v1/webhooks')).body.data;
    t.same(hook.events, ['invoice.created', 'invoice.paid', 'payment.failed']);

    await Promise.all([page.waitForURL(/#\/webhooks\/wh_/), page.click(`a:has-text("${hook.url}")`)]);
    await page.waitForSelector('button:has-text("Save changes")');
    await page.check('input[name="events"][value="subscription.updated"]');
    await page.selectOption('select[name="status"]', 'disabled');
    await page.click('button:has-text("Save changes")');
    await waitUntil(
      async () => (await api('GET', `/v1/webhooks/${hook.id}`)).body.status === 'disabled',
      'the edit to be saved',
    );
    t.same((await api('GET', `/v1/webhooks/${hook.id}`)).body.events, [
      'invoice.created',
      'invoice.paid',
      'payment.failed',
      'subscription.updated',
    ]);
    await page.waitForSelector('.facts .badge-disabled');

    // An invalid URL: the API's problem detail, naming the field, appears on the page.
    await page.fill('input[name="url"]', 'ftp://example.com/hook');
    await page.click('button:has-text("Save changes")');
    const problem = await page.waitForSelector('[role="alert"]:has(code)');
    t.match(await problem.textContent(), /url/);
    await screenshot(page, 'webhook');
  });

  await t.test('products (operator): create one', async (t) => {
    await page.goto(`${base}/console#/products`);
    await page.waitForSelector('table[data-testid="products"]');
    await page.fill('form.grid input[name="name"]', 'Storage');
    await page.fill('form.grid input[name="price"]', '0.000000001');
    await page.selectOption('form.grid select[name="pricing"]', 'metered');
    await page.click('button:has-text("Create product")');
    await page.waitForSelector('text=0.000000001 USD / unit');
    const storage = (await api('GET', '/v1/products')).body.data.find((p: { name: string }) => p.name === 'Storage');
    t.equal(storage.price, 0.000000001, 'the price went to the API digit for digit');
    await screenshot(page, 'products');
  });

  await t.test('the access token is refreshed before it expires, and the page keeps working', async (t) => {
    t.equal(tokenCalls[0]?.grant, 'authorization_code');
    await waitUntil(
      () => tokenCalls.some((c) => c.grant === 'refresh_token'),
      'the page to refresh its token',
      70_000,
      250,
    );
    const refresh = tokenCalls.find((c) => c.grant === 'refresh_token')!;
    t.match(refresh, { status: 200, scope: 'read write admin' });
    await page.click('nav.sidebar a:has-text("Meters")');
    await page.waitForSelector(`tr[data-meter-id="${meterId}"]`);
    t.equal(tokenCalls.filter((c) => c.grant === 'authorization_code').length, 1, 'no second sign-in');
    await page.click('nav.sidebar button:has-text("Sign out")');
    await page.waitForSelector('.signin button:has-text("Sign in")');
    t.match(await page.textContent('.signin'), 'You signed out.');
    await waitUntil(() => tokenCalls.some((c) => c.grant === 'revoke'), 'the revocation request');
    t.match(
      tokenCalls.find((c) => c.grant === 'revoke'),
      { status: 200 },
      'the grant was revoked at the server',
    );
  });

  t.same(
    consoleErrors.filter((e) => !/status of (402|404|422)/.test(e)),
    [],
    'no console errors beyond the failed requests the test provoked (no CSP violations)',
  );
});
