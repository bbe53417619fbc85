import t from 'tap';
import type { Page } from 'playwright-core';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld, NOW } from '../fixtures/hosted.js';

/**
 * The customer portal's billing flows (docs/portal.md) in Chromium with the real api, the billing run and the Stripe
 * simulator: a customer changes plan — an upgrade now, whose pro-rated invoice the run charges through the
 * simulator, and a downgrade the run applies at the period's end — opens an invoice's hosted page from the portal
 * and adds a card that needs 3-D Secure. Signing in, refusals and isolation: portal-flows.test.ts.
 */
const visa = { type: 'card', payment_method: 'pm_card_visa' };

/** Submits a form's button by keyboard: focus, Enter, and the page it leads to. */
async function pressButton(page: Page, selector: string) {
  await page.focus(selector);
  await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
}

t.test('the customer portal: plans, invoices, cards', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const a = await h.customer('Portal Billing Customer');
  const link = await callJson(base, w.operator.tokens.admin, 'POST', '/v1/portal_sessions', {
    customer_id: a.customerId,
    return_url: 'https://shop.example/account',
  });
  t.equal(link.status, 201);
  await page.goto(link.body.url);

  await t.test('change plan: an upgrade now, pro-rated and paid; a downgrade at the period’s end', async (t) => {
    const basicProduct = await w.product('Basic seat', 30, 'USD');
    const proProduct = await w.product('Pro seat', 80, 'USD');
    const plan = (name: string, product_id: string) =>
      w.made(w.operator.tokens.admin, 'POST', '/v1/plans', {
        name,
        currency: 'USD',
        interval: 'month',
        items: [{ product_id }],
      });
    const basic = await plan('Basic', basicProduct);
    const pro = await plan('Pro', proProduct);
    const subC = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { plan_id: basic.id });
    await page.goto(`${base}/portal`);
    t.equal(await page.locator(`#change-plan-${subC.id}`).count(), 0, 'off by default (portal_change_plan)');
    await w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { portal_change_plan: true });
    t.teardown(() => w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { portal_change_plan: false }));
    await page.goto(`${base}/portal`);
    await screenshot(page, 'portal-plan-choices');
    await page.getByLabel('Change plan').selectOption({ label: 'Pro' });
    await screenshot(page, 'portal-change-plan');
    await pressButton(page, `#change-plan-${subC.id}`);
    t.match(await page.locator('#flash').textContent(), /changed now/);
    let sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subC.id}`);
    t.match(sub, { plan_id: pro.id, plan_version: 1, scheduled_plan_change: null }, 'upgraded now');
    await page.getByLabel('Change plan').selectOption({ label: 'Basic' });
    await pressButton(page, `#change-plan-${subC.id}`);
    t.match(await page.locator('#flash').textContent(), /end of the current period/);
    t.match(await page.locator(`#plan-change-note-${subC.id}`).textContent(), /Changes to Basic on/);
    await screenshot(page, 'portal-downgrade-scheduled');
    sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subC.id}`);
    t.match(sub, {
      plan_id: pro.id,
      scheduled_plan_change: { plan_id: basic.id, plan_version: 1, at: sub.current_period_end },
    });
    // The period's invoice, charged through the Stripe simulator with the customer's card: Basic until the upgrade,
    // Pro after it; the billing run then applies the downgrade at the period's end.
    await w.made(a.tokens.write, 'POST', '/v1/billing/payment-methods', visa);
    const r = await w.run(NOW, { ...h.sim.env, PUBLIC_BASE_URL: base, LOG_LEVEL: 'error' });
    t.equal(r.code, 0, r.stderr);
    const invoices = await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    const inv = invoices.data.find((i: any) => i.subscription_id === subC.id);
    t.equal(inv.status, 'paid', 'the prorated invoice is paid');
    t.ok(
      inv.lines.some((l: any) => /Basic seat.*pro-rated/.test(l.description)) &&
        inv.lines.some((l: any) => /Pro seat.*pro-rated/.test(l.description)),
      `both plans pro-rated: ${inv.lines.map((l: any) => l.description).join(' | ')}`,
    );
    t.equal(await h.succeededCharges(inv.id), 1, 'charged once through the simulator');
    sub = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${subC.id}`);
    t.match(sub, { plan_id: basic.id, scheduled_plan_change: null }, 'the downgrade applied at the period’s end');
  });

  let invoiceA: any;
  await t.test('invoices link to their hosted page', async (t) => {
    invoiceA = await h.openInvoice(a);
    await page.goto(`${base}/portal/invoices`);
    await screenshot(page, 'portal-invoices');
    await Promise.all([page.waitForEvent('load'), page.click(`#invoice-${invoiceA.id} a >> nth=0`)]);
    t.equal(page.url(), invoiceA.hosted_invoice_url);
  });

  await t.test('buying credit: offered when the operator allows it, charged once, credited once paid', async (t) => {
    await page.goto(`${base}/portal/balances`);
    t.equal(
      await page.locator('form[action="/portal/credit/buy"]').count(),
      0,
      'off by default (customer_can_buy_credit)',
    );
    await w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { customer_can_buy_credit: true });
    await page.goto(`${base}/portal/balances`);
    await page.fill('#amount', '25');
    await pressButton(page, '#buy-credit');
    t.match(page.url(), /\/portal\/balances\?done=credit$/);
    t.match(await page.locator('#credit-balance').textContent(), /25\.00/, 'the credit shows on the page');
    await screenshot(page, 'portal-buy-credit');
    const credits = await w.made(a.tokens.read, 'GET', '/v1/billing/credits');
    t.same(
      credits.balance.map((b: any) => [Number(b.amount), b.currency]),
      [[25, 'USD']],
      'granted once, in the customer’s currency',
    );
    const topUps = await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    const topUp = topUps.data.filter((i: any) => i.reason === 'top_up');
    t.equal(topUp.length, 1, 'one top-up invoice');
    t.equal(topUp[0].status, 'paid');
    t.equal(await h.succeededCharges(topUp[0].id), 1, 'charged once through the simulator');
    await w.made(w.operator.tokens.admin, 'PATCH', '/v1/portal_settings', { customer_can_buy_credit: false });
  });

  await t.test('a promotion code redeemed in the portal: its coupon on the subscription, counted once', async (t) => {
    const coupon = await w.made(w.operator.tokens.admin, 'POST', '/v1/coupons', {
      name: 'Spring 15',
      percent_off: 15,
      duration: 'forever',
    });
    await w.made(w.operator.tokens.admin, 'POST', '/v1/promotion_codes', {
      coupon_id: coupon.id,
      code: 'SPRING15',
      max_redemptions: 1,
    });
    const subs = await w.made(a.tokens.read, 'GET', '/v1/subscriptions?status=active');
    const sub = subs.data[0];
    await page.goto(`${base}/portal`);
    await page.fill(`#code-${sub.id}`, 'spring15');
    await pressButton(page, `#promotion-${sub.id}`);
    t.match(page.url(), /done=promotion$/);
    t.match(await page.locator(`#discount-${sub.id}`).textContent(), /Spring 15/, 'the discount shows');
    await screenshot(page, 'portal-promotion-code');
    const after = await w.made(a.tokens.read, 'GET', `/v1/subscriptions/${sub.id}`);
    t.equal(after.discount?.coupon?.id, coupon.id, 'the code’s coupon is on the subscription');
    const code = (await w.made(w.operator.tokens.admin, 'GET', '/v1/promotion_codes?code=SPRING15')).data[0];
    t.equal(code.times_redeemed, 1, 'counted once');
    // Used up (max_redemptions 1): a second try is refused with the API's own problem, nothing changed.
    await page.goto(`${base}/portal`);
    await page.fill(`#code-${sub.id}`, 'SPRING15');
    await pressButton(page, `#promotion-${sub.id}`);
    t.match(await page.content(), /no redemption left|redeemed 1 times/);
    const unknown = await callJson(base, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      promotion_code: 'NOPE',
    });
    t.same([unknown.status, unknown.body.code], [422, 'promotion_code_invalid']);
    const both = await callJson(base, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      promotion_code: 'SPRING15',
      coupon_id: coupon.id,
    });
    t.equal(both.status, 422, 'a code and a coupon at once');
  });

  await t.test('a card with 3-D Secure is added through the hosted card page', async (t) => {
    await page.goto(`${base}/portal/payment-methods`);
    t.match(await page.locator('#cards').textContent(), /visa •••• 4242[\s\S]*Default/, 'the card the run charged');
    await Promise.all([page.waitForURL(/\/hosted\/cards\//), page.click('#add-card')]);
    await h.enterCard('4000 0027 6000 3184');
    await page.click('#save-card');
    await page.frameLocator('iframe[name="stripe-challenge-frame"]').locator('#complete-auth').waitFor();
    await h.completeChallenge();
    await page.waitForSelector('#pay-message.ok');
    await page.goto(`${base}/portal/payment-methods`);
    t.match(await page.locator('#cards').textContent(), /visa •••• 3184[\s\S]*Default/);
    await screenshot(page, 'portal-payment-methods');
  });

  t.same(
    h.consoleErrors.filter((e) => !/status of 4(02|03|04|09|10)/.test(e)),
    [],
    'no CSP violation or script error',
  );
});
