import t from 'tap';
import { waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { newId } from '../../shared/ids.js';
import { launchBrowser, screenshot, signInToConsole, startConsoleApi } from '../fixtures/console.js';
import { startConsumer } from '../integration/ingest-helpers.js';

/**
 * The console's catalog and settings pages as a new user meets them (issue 30), in headless Chromium against the
 * whole api and the usage consumer: every price model shown as it bills and creatable from the form, unique_count
 * meters, dates in ISO whatever the browser's locale, a webhook form that starts over after a creation, and a
 * pending attempt that is not shown as sent.
 */
t.test('web console: price models, unique_count meters, ISO dates, webhook form and pending attempts', async (t) => {
  const world = await startConsoleApi(t);
  await startConsumer(t, world.config, { maxWaitMs: 100 });
  const { base } = world;
  const user = await createTestAccount(world.infra, { operator: true, name: 'Acme Catalog' });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(base, user.tokens.admin, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const { page, consoleErrors } = await launchBrowser(t);

  await t.test('products: each price model as it bills', async (t) => {
    await api('POST', '/v1/products', {
      name: 'Tokens (graduated)',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 1000, unit_price: 0 },
        { up_to: 10000, unit_price: 0.01, flat_price: 5 },
        { up_to: null, unit_price: 0.008 },
      ],
    });
    await api('POST', '/v1/products', {
      name: 'Exports (packs)',
      price: 2.5,
      currency: 'USD',
      pricing: 'package',
      package_size: 1000,
    });
    await api('POST', '/v1/products', { name: 'Team plan', price: 49.99, currency: 'USD' });
    await signInToConsole(page, base, user, '#/products');
    await page.waitForSelector('table[data-testid="products"]');
    const price = (name: string) => page.textContent(`tr:has-text("${name}") [data-testid="price"]`);
    t.same(
      await page.locator('tr:has-text("Tokens (graduated)") [data-testid="price"] div').allTextContents(),
      [
        'graduated tiers',
        'up to 1,000: 0.00 USD / unit',
        'up to 10,000: 0.01 USD / unit + 5.00 USD',
        'above 10,000: 0.008 USD / unit',
      ],
      'one line per tier',
    );
    t.equal(await price('Exports (packs)'), '2.50 USD / 1,000 units');
    t.equal(await price('Team plan'), '49.99 USD / month');
    t.notMatch(await page.textContent('table[data-testid="products"]'), /0\.00 USD \/ month|2\.50 USD \/ month/);
  });

  await t.test('products: the form creates every model the API has', async (t) => {
    t.same(
      await page
        .locator('form.grid select[name="pricing"] option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
      ['flat', 'metered', 'package', 'tiered'],
    );
    await page.fill('form.grid input[name="name"]', 'Storage packs');
    await page.selectOption('form.grid select[name="pricing"]', 'package');
    await page.fill('form.grid input[name="price"]', '2.5');
    await page.fill('form.grid input[name="package_size"]', '500');
    await page.click('button:has-text("Create product")');
    await page.waitForSelector('tr:has-text("Storage packs")');
    t.equal(await page.textContent('tr:has-text("Storage packs") [data-testid="price"]'), '2.50 USD / 500 units');

    await page.fill('form.grid input[name="name"]', 'Seats (volume)');
    await page.selectOption('form.grid select[name="pricing"]', 'tiered');
    await page.selectOption('form.grid select[name="tiers_mode"]', 'volume');
    await page.fill('input[name="tier_0_up_to"]', '100');
    await page.fill('input[name="tier_0_unit_price"]', '1');
    await page.fill('input[name="tier_1_unit_price"]', '0.5');
    await page.fill('input[name="tier_1_flat_price"]', '10');
    t.ok(await page.isDisabled('input[name="tier_1_up_to"]'), 'the last tier has no upper bound');
    await page.click('button:has-text("Create product")');
    await page.waitForSelector('tr:has-text("Seats (volume)")');
    const products = (await api('GET', '/v1/products?per_page=100')).data as any[];
    t.match(
      products.find((p) => p.name === 'Storage packs'),
      { pricing: 'package', price: 2.5, package_size: 500, currency: 'USD' },
    );
    t.match(
      products.find((p) => p.name === 'Seats (volume)'),
      {
        pricing: 'tiered',
        tiers_mode: 'volume',
        tiers: [
          { up_to: 100, unit_price: 1 },
          { up_to: null, unit_price: 0.5, flat_price: 10 },
        ],
      },
    );
    t.equal(await page.inputValue('form.grid input[name="name"]'), '', 'the form starts over');
    t.equal(await page.inputValue('form.grid select[name="pricing"]'), 'flat');
    await screenshot(page, 'products-price-models');

    // Subscribing shows the same prices, and a usage-priced product of any model asks for its meter.
    await page.goto(`${base}/console#/subscriptions`);
    await page.waitForSelector('label:has-text("Exports (packs)")');
    t.match(await page.textContent('tr:has(label:has-text("Exports (packs)"))'), /2\.50 USD \/ 1,000 units/);
  });

  let meterId = '';
  await t.test('meters: a unique_count meter; the usage table and date fields in ISO', async (t) => {
    await page.goto(`${base}/console#/meters`);
    await page.fill('input[name="name"]', 'Active users');
    await page.fill('input[name="unit"]', 'users');
    await page.selectOption('select[name="type"]', 'counter');
    t.same(
      await page
        .locator('select[name="aggregation"] option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
      ['sum', 'count', 'unique_count'],
    );
    t.equal(await page.locator('input[name="unique_by"]').count(), 0, 'no dimension asked for a sum');
    await page.selectOption('select[name="aggregation"]', 'unique_count');
    await page.fill('input[name="unique_by"]', 'user_id');
    await Promise.all([page.waitForURL(/#\/meters\/mtr_/), page.click('button:has-text("Create meter")')]);
    meterId = new URL(page.url()).hash.split('/')[2]!;
    t.match(await api('GET', `/v1/meters/${meterId}`), { aggregation: 'unique_count', unique_by: 'user_id' });
    t.match(await page.textContent('.facts'), /counts distinct\s*user_id/);

    for (const name of ['start_date', 'end_date']) {
      t.equal(
        await page.getAttribute(`input[name="${name}"]`, 'type'),
        'text',
        `${name}: not the locale's date picker`,
      );
      t.match(await page.inputValue(`input[name="${name}"]`), /^\d{4}-\d{2}-\d{2}$/, `${name}: ISO`);
    }

    await waitForIngressMeter(base, user.tokens.write, meterId);
    const now = Date.now();
    const records = ['u1', 'u2', 'u1'].map((u, i) => ({
      value: 1,
      timestamp: new Date(now - (i + 1) * 1000).toISOString(),
      dimensions: { user_id: u },
    }));
    t.equal((await callJson(base, user.tokens.write, 'POST', `/v1/meters/${meterId}/usage`, records)).status, 202);
    await waitUntil(
      async () => {
        await page.click('button:has-text("Refresh")');
        await page.waitForSelector('button:has-text("Refresh"):not([disabled])');
        return (await page.textContent('[data-testid="usage-total"]')) === '2';
      },
      'two distinct users',
      30_000,
      250,
    );
    await page.click('summary:has-text("Windows as a table")');
    const starts = await page.locator('details table tbody tr td:first-child').allTextContents();
    t.ok(starts.length >= 1, `windows with records: ${starts.join(', ')}`);
    for (const s of starts) t.match(s, /^\d{4}-\d{2}-\d{2} \d{2}:00 UTC$/, 'a window start as people read it');
    t.notMatch(await page.textContent('details'), /T\d{2}:\d{2}:\d{2}\.\d{3}Z/, 'no raw timestamps');

    // A range typed as ISO dates is used as typed: day windows over the four days.
    await page.selectOption('select[name="window"]', 'day');
    const day = (ago: number) => new Date(now - ago * 86_400_000).toISOString().slice(0, 10);
    await page.fill('input[name="start_date"]', day(3));
    await waitUntil(
      async () =>
        JSON.stringify(JSON.parse((await page.getAttribute('canvas', 'data-labels'))!)) ===
        JSON.stringify([day(3), day(2), day(1), day(0)]),
      'day windows from the typed start date',
    );
    await screenshot(page, 'meter-unique-count');
  });

  await t.test('webhooks: the form starts over after a creation; a pending attempt is not "sent"', async (t) => {
    await page.goto(`${base}/console#/webhooks`);
    await page.fill('input[name="url"]', 'http://127.0.0.1:9/hooks/first');
    await page.uncheck('input[name="events"][value="invoice.created"]');
    await page.check('input[name="events"][value="meter.usage.recorded"]');
    await page.fill('input[name="secret"]', 'a secret of my own, long enough');
    await page.click('button:has-text("Create webhook")');
    await page.waitForSelector('table[data-testid="webhooks"] a:has-text("http://127.0.0.1:9/hooks/first")');
    const [hook] = (await api('GET', '/v1/webhooks')).data;
    t.same(hook.events, ['invoice.paid', 'payment.failed', 'meter.usage.recorded']);
    t.equal(await page.inputValue('input[name="url"]'), '', 'the URL is cleared');
    t.equal(await page.inputValue('input[name="secret"]'), '', 'the secret is cleared');
    const checked = await page
      .locator('input[name="events"]:checked')
      .evaluateAll((os) => os.map((o) => (o as HTMLInputElement).value));
    t.same(checked, ['invoice.created', 'invoice.paid', 'payment.failed'], 'the default events again');

    // Attempt 1 failed at 10:00:00.120; attempt 2 is pending (due at 10:01, not sent yet).
    const eventId = newId('evt');
    const rows = [
      [
        1,
        'failed',
        500,
        'HTTP 500',
        31,
        '2026-01-01T10:00:00.000Z',
        '2026-01-01T10:00:00.120Z',
        '2026-01-01T10:01:00.000Z',
      ],
      [2, 'pending', null, null, null, '2026-01-01T10:00:00.200Z', null, '2026-01-01T10:01:00.000Z'],
    ];
    for (const r of rows)
      await world.infra.pg.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, response_status,
           error, duration_ms, created_at, attempted_at, next_attempt_at)
         VALUES ($1, $2, $3, $4, 'invoice.paid', $5, $6, $7, $8, $9, $10, $11, $12)`,
        [newId('whd'), hook.id, user.accountId, eventId, ...r],
      );
    await page.goto(`${base}/console#/webhooks/${hook.id}`);
    await page.waitForSelector('tr[data-status="pending"]');
    const cells = async (status: string) => page.locator(`tr[data-status="${status}"] td`).allTextContents();
    const header = await page.locator('table[data-testid="deliveries"] th').allTextContents();
    const sent = header.indexOf('sent');
    t.equal((await cells('pending'))[sent], 'not yet', 'a pending attempt has not been sent');
    t.equal((await cells('failed'))[sent], '2026-01-01 10:00 UTC', 'a made attempt: when it was sent');
    t.match((await api('GET', `/v1/webhooks/${hook.id}/deliveries`)).data, [
      { attempt: 2, attempted_at: null },
      { attempt: 1, attempted_at: '2026-01-01T10:00:00.120Z' },
    ]);
    await screenshot(page, 'webhook-pending-attempt');
  });

  t.same(
    consoleErrors.filter((e) => !/status of (402|404|422)/.test(e)),
    [],
    'no console errors',
  );
});
