import t from 'tap';
import type { Page } from 'playwright-core';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld, type HostedWorld } from '../fixtures/hosted.js';
import { after, dayOf, NEXT_MONTH, THIS_MONTH } from '../fixtures/calendar.js';

/**
 * The customer portal (docs/portal.md) in Chromium with the real api, the billing run and the Stripe simulator: an
 * operator's one-time link signs the customer in (a used or expired link refused), sees this period's usage chart,
 * cancels at the period's end and undoes it, pauses and resumes, changes billing details, reads its credit and
 * entitlements; CSRF tokens are checked; one customer's session never reaches another's data. Plan changes,
 * invoices and cards: portal-billing.test.ts.
 */
async function portalLink(h: HostedWorld, customerId: string): Promise<any> {
  const r = await callJson(h.base, h.w.operator.tokens.admin, 'POST', '/v1/portal_sessions', {
    customer_id: customerId,
    return_url: 'https://shop.example/account',
  });
  if (r.status !== 201) throw new Error(`portal session → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A card saved over the API through the Stripe simulator (raw numbers never reach meterline). */
const visa = { type: 'card', payment_method: 'pm_card_visa' };

/** Submits a form's button by keyboard: focus, Enter, and the page it leads to. */
async function pressButton(page: Page, selector: string) {
  await page.focus(selector);
  await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
}

t.test('the customer portal', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const pg = w.api.infra.pg;
  const product = await w.product('Portal plan', 30, 'USD');
  const a = await h.customer('Portal Customer A');
  const b = await h.customer('Portal Customer B');
  const aCustomer = a.customerId;
  const calls = await w.product('API calls', 0.5, 'USD', 'metered');
  const meterA = await w.meter(a, 'api calls', 'call', 'counter', 'sum');
  const subA = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: product }, { product_id: calls, meter_id: meterA }],
  });
  // This month's usage (the portal charts the current period): 5 on its first day, 7.25 in two records today.
  const today = new Date(Date.now() - 60_000);
  await w.usage(a, meterA, [
    { value: 5, timestamp: after(THIS_MONTH, 0, 0, 6) },
    { value: 7, timestamp: today.toISOString() },
    { value: 0.25, timestamp: new Date(today.getTime() + 30_000).toISOString() },
  ]);
  const todaysBar = `${dayOf(today)}: ${today.getUTCDate() === 1 ? '12.25' : '7.25'}`;
  const subB = await w.made(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: product }] });
  const pmB = (await w.made(b.tokens.write, 'POST', '/v1/billing/payment-methods', visa)).id;
  const invoiceB = await h.openInvoice(b);

  let link: any;
  await t.test('an operator makes a link: shown once, stored as a hash; customers may not', async (t) => {
    link = await portalLink(h, aCustomer);
    t.match(link, { id: /^pts_/, customer_id: aCustomer, return_url: 'https://shop.example/account', locale: null });
    t.match(link.url, new RegExp(`^${base}/portal/start/[A-Za-z0-9_-]{43}$`));
    const ttl = Date.parse(link.expires_at) - Date.now();
    t.ok(ttl > 3_500_000 && ttl <= 3_600_000, 'works for an hour by default');
    const stored = await pg.query('SELECT link_hash, cookie_hash FROM portal_sessions WHERE id = $1', [link.id]);
    t.equal(stored.rows[0].link_hash.length, 32, 'a SHA-256 is stored…');
    t.notOk(JSON.stringify(stored.rows).includes(link.url.split('/').pop()), '…never the token');
    const byCustomer = await callJson(base, a.tokens.write, 'POST', '/v1/portal_sessions', {
      customer_id: aCustomer,
      return_url: 'https://shop.example',
    });
    t.equal(byCustomer.status, 403, 'only operators make portal links');
    const bad = await callJson(base, w.operator.tokens.admin, 'POST', '/v1/portal_sessions', {
      customer_id: aCustomer,
      return_url: 'javascript:alert(1)',
    });
    t.equal(bad.status, 422);
    t.match(bad.body.errors, [{ field: 'return_url' }]);
    const audit = await pg.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE resource_type = 'portal_session' AND resource_id = $1`,
      [link.id],
    );
    t.equal(audit.rows[0].n, 1, 'the new session is in the audit log');
  });

  await t.test('opening the link signs the customer in; the link then no longer works', async (t) => {
    const res = await page.goto(link.url);
    t.equal(res!.status(), 200);
    t.equal(new URL(page.url()).pathname, '/portal', 'redirected to the overview');
    const cookies = await page.context().cookies(`${base}/portal`);
    const cookie = cookies.find((c) => c.name === 'meterline_portal');
    t.ok(cookie, 'the portal cookie is set');
    t.equal(cookie?.httpOnly, true);
    t.equal(cookie?.sameSite, 'Lax');
    t.equal(cookie?.path, '/portal');
    t.not(cookie?.value, link.url.split('/').pop(), 'the cookie is not the link’s token');
    t.match(await page.locator(`#sub-${subA.id}`).textContent(), /Portal plan/);
    t.equal(await page.locator(`#sub-${subB.id}`).count(), 0, 'not B’s subscription');
    const chart = page.locator(`#sub-${subA.id} figure.usage-chart`);
    t.equal(await chart.count(), 1, 'one usage chart: the metered item');
    t.equal((await chart.locator('.usage-total').textContent())?.trim(), '12.25', 'the period’s exact total');
    const days = (NEXT_MONTH.getTime() - THIS_MONTH.getTime()) / 86_400_000;
    t.equal(await chart.locator('svg rect').count(), days, 'a bar a day of the month');
    t.match(
      await chart
        .locator(`svg rect >> nth=${today.getUTCDate() - 1}`)
        .locator('title')
        .textContent(),
      todaysBar,
    );
    t.equal(await page.locator('#return-link').getAttribute('href'), 'https://shop.example/account');
    t.match(res!.headers()['content-security-policy'], /form-action 'self'/);
    await screenshot(page, 'portal-overview');
    const again = await page.goto(link.url);
    t.equal(again!.status(), 410, 'a used link is refused');
    t.match(await page.locator('#portal-refused').textContent(), /opens once/);
    await screenshot(page, 'portal-link-used');
  });

  await t.test('an expired link is refused; an unknown one is 404', async (t) => {
    const old = await portalLink(h, aCustomer);
    await pg.query(`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [old.id]);
    const res = await page.goto(old.url);
    t.equal(res!.status(), 410);
    t.match(await page.locator('h1').textContent(), /expired/);
    await screenshot(page, 'portal-link-expired');
    const unknown = await page.goto(`${base}/portal/start/${'x'.repeat(43)}`);
    t.equal(unknown!.status(), 404);
  });

  await t.test('cancel at the period’s end and undo it, pause and resume, by keyboard', async (t) => {
    await page.goto(`${base}/portal`);
    // Self-serve subscriptions: the customer may cancel and pause them (terms-owner.ts).
    await pressButton(page, `#cancel-${subA.id}`);
    t.match(await page.locator('#flash').textContent(), /end at the end of the current period/);
    t.equal(await page.locator(`#cancel-note-${subA.id}`).count(), 1);
    await screenshot(page, 'portal-cancel-scheduled');
    let sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`);
    t.equal(sub.cancel_at_period_end, true);
    t.equal(sub.cancel_at, sub.current_period_end);
    await pressButton(page, `#keep-${subA.id}`);
    sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`);
    t.equal(sub.cancel_at_period_end, false, 'the cancellation is undone');
    await pressButton(page, `#pause-${subA.id}`);
    t.equal(await page.locator(`#pause-note-${subA.id}`).count(), 1);
    sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`);
    t.match(sub.pause_collection, { behavior: 'void' });
    await pressButton(page, `#resume-${subA.id}`);
    sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`);
    t.equal(sub.pause_collection, null);
    const events = await pg.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'subscription.updated' AND data->>'subscription_id' = $1`,
      [subA.id],
    );
    t.equal(events.rows[0].n, 5, 'created, then one subscription.updated per change');
    const audited = await pg.query(
      `SELECT actor_type, actor_account_id, actor_name FROM audit_events
        WHERE resource_type = 'subscription' AND resource_id = $1 AND operation LIKE 'POST /portal/%'`,
      [subA.id],
    );
    t.equal(audited.rows.length, 4, 'each change audited as the portal’s');
    t.match(audited.rows[0], {
      actor_type: 'public',
      actor_account_id: a.accountId,
      actor_name: `portal session ${link.id}`,
    });
  });

  await t.test('the operator’s subscription: cancel only as portal settings allow', async (t) => {
    const opSub = await w.made(w.operator.tokens.admin, 'POST', '/v1/subscriptions', {
      customer_id: aCustomer,
      items: [{ product_id: product }],
    });
    await page.goto(`${base}/portal`);
    t.equal(await page.locator(`#cancel-${opSub.id}`).count(), 0, 'no cancel button by default');
    const csrf = await page.locator('input[name="csrf"]').first().getAttribute('value');
    const refused = await page.request.post(`${base}/portal/subscriptions/${opSub.id}/cancel`, {
      form: { csrf: csrf! },
    });
    t.equal(refused.status(), 403, 'refused by the API’s rule');
    t.match(await refused.text(), /made by the operator/);
    await w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { customer_can_cancel: true });
    t.teardown(() => w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { customer_can_cancel: false }));
    await page.goto(`${base}/portal`);
    await pressButton(page, `#cancel-${opSub.id}`);
    const sub = await w.made(w.operator.tokens.admin, 'GET', `/v1/subscriptions/${opSub.id}`);
    t.equal(sub.cancel_at_period_end, true, 'allowed once the operator turned customer_can_cancel on');
  });

  await t.test('every form needs its session’s CSRF token', async (t) => {
    for (const csrf of [undefined, 'x'.repeat(43)]) {
      const res = await page.request.post(`${base}/portal/subscriptions/${subA.id}/cancel`, {
        form: csrf ? { csrf } : { other: '1' },
      });
      t.equal(res.status(), 403);
      t.match(await res.text(), /form has expired/);
    }
    const sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subA.id}`);
    t.equal(sub.cancel_at_period_end, false, 'nothing changed');
  });

  await t.test('billing details: labelled fields, saved to the customer', async (t) => {
    await page.goto(`${base}/portal/billing-details`);
    await page.getByLabel('Street and number').fill('Hauptstraße 5');
    await page.getByLabel('City').fill('Berlin');
    await page.getByLabel('State or region').fill('BE');
    await page.getByLabel('Postal code').fill('10115');
    await page.getByLabel(/Kind/).fill('eu_vat');
    await page.getByLabel('Number', { exact: true }).fill('DE999999999');
    await Promise.all([page.waitForEvent('load'), page.click('#save-billing')]);
    t.match(await page.locator('#flash').textContent(), /saved/);
    await screenshot(page, 'portal-billing-details');
    const c = await w.made(w.operator.tokens.admin, 'GET', `/v1/customers/${aCustomer}`);
    t.match(c.billing_address, { line1: 'Hauptstraße 5', city: 'Berlin', state: 'BE', zip: '10115' });
    t.same(c.tax_ids, [{ type: 'eu_vat', value: 'DE999999999' }]);
    await w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { portal_update_billing_details: false });
    t.teardown(() =>
      w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { portal_update_billing_details: true }),
    );
    await page.goto(`${base}/portal/billing-details`);
    t.equal(await page.locator('#save-billing').count(), 0, 'off: no form to save');
    const csrf = await page.locator('input[name="csrf"]').first().getAttribute('value');
    const res = await page.request.post(`${base}/portal/billing-details`, {
      form: { csrf: csrf!, line1: 'x', city: 'x', state: 'x', zip: 'x' },
    });
    t.equal(res.status(), 403);
  });

  await t.test('credit and entitlements', async (t) => {
    await w.made(w.operator.tokens.admin, 'POST', '/v1/billing/credits', {
      customer_id: aCustomer,
      amount: 12.5,
      currency: 'USD',
      description: 'Welcome credit',
    });
    await w.made(w.operator.tokens.admin, 'POST', '/v1/entitlements', {
      customer_id: aCustomer,
      feature: 'sso',
      type: 'boolean',
    });
    await page.goto(`${base}/portal/balances`);
    t.match(await page.locator('#credit-balance').textContent(), /12\.50 USD/);
    t.match(await page.locator('#credit-ledger').textContent(), /Welcome credit/);
    t.match(await page.locator('#entitlements').textContent(), /sso/);
    await screenshot(page, 'portal-balances');
  });

  await t.test('customer A’s session never reaches B’s data: B’s ids are 404 on every portal URL', async (t) => {
    await page.goto(`${base}/portal`);
    const csrf = await page.locator('input[name="csrf"]').first().getAttribute('value');
    for (const path of [`/portal/invoices/${invoiceB.id}`, `/portal/invoices/${invoiceB.id}/pdf`]) {
      const res = await page.request.get(`${base}${path}`, { maxRedirects: 0 });
      t.equal(res.status(), 404, path);
    }
    for (const path of [
      `/portal/subscriptions/${subB.id}/cancel`,
      `/portal/subscriptions/${subB.id}/pause`,
      `/portal/payment-methods/${pmB}/default`,
    ]) {
      const res = await page.request.post(`${base}${path}`, { form: { csrf: csrf! }, maxRedirects: 0 });
      t.equal(res.status(), 404, path);
    }
    const sub = await w.made(b.tokens.read, 'GET', `/v1/subscriptions/${subB.id}`);
    t.equal(sub.cancel_at_period_end, false);
    t.equal(sub.pause_collection, null);
    for (const path of ['/portal', '/portal/invoices', '/portal/payment-methods', '/portal/balances']) {
      const html = await (await page.request.get(`${base}${path}`)).text();
      t.notOk(html.includes(subB.id) || html.includes(invoiceB.id) || html.includes(pmB), `${path} shows nothing of B`);
    }
  });

  await t.test('without a live session the portal is refused', async (t) => {
    await pg.query(`UPDATE portal_sessions SET session_expires_at = now() WHERE id = $1`, [link.id]);
    const res = await page.goto(`${base}/portal`);
    t.equal(res!.status(), 403);
    t.match(await page.locator('h1').textContent(), /session has ended/);
  });

  t.same(
    h.consoleErrors.filter((e) => !/status of 4(02|03|04|10)/.test(e)),
    [],
    'no CSP violation or script error',
  );
});
