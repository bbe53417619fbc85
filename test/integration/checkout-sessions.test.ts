import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld, NOW } from '../fixtures/hosted.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Checkout (issue 44 item 2, docs/checkout.md) in Chromium against the real api, the billing run and the Stripe
 * simulator: from the operator's session to the customer's paid first invoice with a promotion code; a double click,
 * two tabs and two concurrent completions making one customer and one subscription; 3-D Secure on the card; an expired
 * session and a refused code shown as pages and problems; bad input to the API. Screenshots of every page.
 */
t.test('checkout sessions', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const pg = w.api.infra.pg;
  const ADMIN = w.operator.tokens.admin;
  const call = (method: string, path: string, body?: unknown, token = ADMIN) =>
    callJson(base, token, method, path, body);
  const product = await w.product('Team seats', 20, 'USD');
  const plan = (
    await w.made(ADMIN, 'POST', '/v1/plans', {
      name: 'Team <b>monthly</b>',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: product }],
    })
  ).id;
  const coupon = (await w.made(ADMIN, 'POST', '/v1/coupons', { name: 'WELCOME', percent_off: 10, duration: 'forever' }))
    .id;
  await w.made(ADMIN, 'POST', '/v1/promotion_codes', { coupon_id: coupon, code: 'Welcome10' });
  const success = `${base}/healthz`;
  const session = async (body: Record<string, unknown>) =>
    w.made(ADMIN, 'POST', '/v1/checkout_sessions', {
      plan_id: plan,
      success_url: success,
      cancel_url: `${base}/healthz?canceled=1`,
      ...body,
    });
  const subscriptionsOf = async (accountId: string) =>
    (await pg.query('SELECT id FROM subscriptions WHERE account_id = $1', [accountId])).rows.map((r) => r.id);

  let paidFlow: { session: any; accountId: string };
  await t.test('a new customer: plan and price, a card, a code, a double click → subscribed once', async (t) => {
    const email = `checkout.${Date.now()}@example.com`;
    const s = await session({ customer_email: email, allow_promotion_codes: true });
    t.match(s, { id: /^cs_/, status: 'open', customer_id: null, customer_email: email });
    t.match(s.url, new RegExp(`^${base}/hosted/checkout/${s.id}/[A-Za-z0-9_-]{43}$`));
    t.ok(Date.parse(s.expires_at) > Date.now() + 23 * 3_600_000, 'works for a day');
    const res = await page.goto(s.url);
    t.equal(res!.status(), 200);
    t.match(res!.headers()['content-security-policy'], /default-src 'none'/);
    t.equal(await page.locator('#plan-name').textContent(), 'Team <b>monthly</b>', 'the plan name, escaped');
    t.match(await page.locator('#plan-items').textContent(), /Team seats\s*20\.00 USD per month/);
    t.equal(await page.locator('#customer-email').textContent(), email);
    t.equal(await page.getByLabel('Promotion code').count(), 1, 'the code field is labelled');
    await screenshot(page, 'checkout-open');
    await h.enterCard('4242 4242 4242 4242');
    // By keyboard: the code field, then Subscribe focused and pressed twice.
    await page.getByLabel('Promotion code').fill('welcome10');
    await page.focus('#subscribe');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.dblclick('#subscribe').catch(() => undefined);
    await page.waitForURL(/\/healthz\?session_id=cs_/, { timeout: 60_000 });
    t.equal(new URL(page.url()).searchParams.get('session_id'), s.id, 'redirected to success_url with the session');
    await screenshot(page, 'checkout-success-redirect');
    const done = (await call('GET', `/v1/checkout_sessions/${s.id}`)).body;
    t.match(done, { status: 'complete', subscription_id: /^sub_/, promotion_code_id: /^promo_/, customer_id: /^cus_/ });
    const accounts = (await pg.query('SELECT id FROM accounts WHERE email = $1', [email])).rows;
    t.equal(accounts.length, 1, 'one customer');
    const accountId = accounts[0].id as string;
    t.same(await subscriptionsOf(accountId), [done.subscription_id], 'one subscription');
    const sub = (await call('GET', `/v1/subscriptions/${done.subscription_id}`)).body;
    t.match(sub, { plan_id: plan, discount: { coupon: { id: coupon } } });
    const events = await pg.query(
      `SELECT data FROM outbox_events WHERE type = 'checkout.session.completed' AND data->>'checkout_session_id' = $1`,
      [s.id],
    );
    t.equal(events.rows.length, 1, 'one checkout.session.completed');
    t.match(events.rows[0].data, {
      subscription_id: done.subscription_id,
      plan_id: plan,
      plan_version: 1,
      coupon_id: coupon,
      promotion_code_id: done.promotion_code_id,
      customer_created: true,
      customer_id: done.customer_id,
    });
    const code = (await call('GET', `/v1/promotion_codes/${done.promotion_code_id}`)).body;
    t.equal(code.times_redeemed, 1, 'the code counted once');
    t.notOk(
      h.sentToMeterline.some((r) => /4242 4242|4242424242424242/.test(r)),
      'the number never reached meterline',
    );
    await page.goto(s.url);
    t.equal(await page.locator('#checkout-complete').count(), 1, 'a refresh shows it complete');
    await screenshot(page, 'checkout-complete-refresh');
    paidFlow = { session: done, accountId };
  });

  await t.test(
    'the first invoice: issued by the billing run, discounted, paid with the card, one charge',
    async (t) => {
      const r = await w.run(NOW, { ...h.sim.env, PUBLIC_BASE_URL: base, LOG_LEVEL: 'error' });
      t.equal(r.code, 0, r.stderr);
      const inv = await pg.query(`SELECT id, status, amount::text AS amount FROM invoices WHERE subscription_id = $1`, [
        paidFlow.session.subscription_id,
      ]);
      t.equal(inv.rows.length, 1, 'one invoice');
      const invoice = inv.rows[0];
      t.equal(invoice.status, 'paid');
      const lines = (
        await pg.query(`SELECT type, amount::text AS amount FROM invoice_lines WHERE invoice_id = $1`, [invoice.id])
      ).rows;
      const flat = lines.find((l) => l.type === 'flat')!;
      const discount = lines.find((l) => l.type === 'discount');
      t.ok(discount, 'the promotion code’s coupon discounts it');
      t.equal(new Decimal(discount!.amount).toFixed(2), new Decimal(flat.amount).times(-0.1).toFixed(2), '10 % off');
      t.equal(
        lines.reduce((s, l) => s.plus(l.amount), new Decimal(0)).toFixed(2),
        new Decimal(invoice.amount).toFixed(2),
        'amount = Σ lines',
      );
      t.equal(await h.succeededCharges(invoice.id), 1, 'charged once');
    },
  );

  await t.test('two tabs and two concurrent completions → one subscription', async (t) => {
    const a = await h.customer('Two Tabs');
    const s = await session({ customer_id: a.customerId });
    const second = await page.context().newPage();
    await page.goto(s.url);
    await second.goto(s.url);
    await h.enterCard('4242 4242 4242 4242');
    const f2 = second.frameLocator('iframe[name="stripe-card-element"]');
    await f2.locator('input[name="cardnumber"]').fill('5555 5555 5555 4444');
    await f2.locator('input[name="exp-date"]').fill('12 / 34');
    await f2.locator('input[name="cvc"]').fill('123');
    await Promise.all([page.click('#subscribe'), second.click('#subscribe')]);
    await Promise.all([
      page.waitForURL(/session_id=cs_/, { timeout: 60_000 }),
      second.waitForURL(/session_id=cs_/, { timeout: 60_000 }),
    ]);
    await second.close();
    t.equal((await subscriptionsOf(a.accountId)).length, 1, 'two tabs: one subscription');
    const b = await h.customer('Concurrent API');
    const s2 = await session({ customer_id: b.customerId });
    const path = new URL(s2.url).pathname;
    const answers = await Promise.all(
      [1, 2, 3].map(() => callJson(base, undefined, 'POST', `${path}/complete`, { payment_method: 'pm_card_visa' })),
    );
    t.same(
      answers.map((r) => r.status),
      [200, 200, 200],
      JSON.stringify(answers.map((r) => r.body)),
    );
    t.equal(new Set(answers.map((r) => r.body.redirect_url)).size, 1, 'the same redirect for each');
    t.equal((await subscriptionsOf(b.accountId)).length, 1, 'three concurrent completions: one subscription');
    const events = await pg.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'checkout.session.completed' AND data->>'checkout_session_id' = $1`,
      [s2.id],
    );
    t.equal(events.rows[0].n, 1);
  });

  await t.test('a card asking for 3-D Secure: the challenge, then subscribed', async (t) => {
    const a = await h.customer('Three D');
    const s = await session({ customer_id: a.customerId, trial_days: 14 });
    await page.goto(s.url);
    t.match(await page.locator('#trial').textContent(), /Free for 14 days/);
    await h.enterCard('4000 0027 6000 3184');
    await page.click('#subscribe');
    await page.frameLocator('iframe[name="stripe-challenge-frame"]').locator('#complete-auth').waitFor();
    await screenshot(page, 'checkout-3ds-challenge');
    await h.completeChallenge();
    await page.waitForURL(/session_id=cs_/, { timeout: 60_000 });
    const done = (await call('GET', `/v1/checkout_sessions/${s.id}`)).body;
    t.equal(done.status, 'complete');
    const sub = (await call('GET', `/v1/subscriptions/${done.subscription_id}`)).body;
    t.ok(sub.trial_end, 'the session’s trial');
    const pms = await callJson(base, a.tokens.read, 'GET', '/v1/billing/payment-methods');
    t.match(pms.body.data, [{ card: { last4: '3184' }, is_default: true }]);
  });

  await t.test('refusals: a code refused on the page, an expired session, a wrong link', async (t) => {
    const a = await h.customer('Refused');
    const s = await session({ customer_id: a.customerId, allow_promotion_codes: true });
    const off = await w.made(ADMIN, 'POST', '/v1/promotion_codes', { coupon_id: coupon, code: 'OLDCODE' });
    await w.made(ADMIN, 'POST', `/v1/promotion_codes/${off.id}/deactivate`);
    await page.goto(s.url);
    await h.enterCard('4242 4242 4242 4242');
    await page.getByLabel('Promotion code').fill('oldcode');
    await page.click('#subscribe');
    await page.waitForSelector('#pay-message.error');
    t.match(await page.locator('#pay-message').textContent(), /no longer active/);
    t.equal(await page.locator('#subscribe').isDisabled(), false, 'the customer may try again');
    await screenshot(page, 'checkout-code-refused');
    t.equal((await subscriptionsOf(a.accountId)).length, 0, 'nothing subscribed');
    await pg.query(`UPDATE checkout_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [s.id]);
    const expired = await page.goto(s.url);
    t.equal(expired!.status(), 410);
    t.match(await page.locator('#link-refused').textContent(), /Nothing was charged/);
    await screenshot(page, 'checkout-expired');
    const late = await callJson(base, undefined, 'POST', `${new URL(s.url).pathname}/complete`, {
      payment_method: 'pm_card_visa',
    });
    t.equal(late.status, 409);
    t.equal(late.body.code, 'checkout_session_expired');
    t.equal((await call('GET', `/v1/checkout_sessions/${s.id}`)).body.status, 'expired');
    const wrong = await page.goto(`${base}/hosted/checkout/${s.id}/${'x'.repeat(43)}`);
    t.equal(wrong!.status(), 404);
    await screenshot(page, 'checkout-wrong-link');
  });

  await t.test('bad input to POST /v1/checkout_sessions: precise problems, nothing written', async (t) => {
    const a = await h.customer('Bad Input');
    const before = (await pg.query('SELECT count(*)::int AS n FROM checkout_sessions')).rows[0].n;
    const ok = { plan_id: plan, customer_id: a.customerId, success_url: success, cancel_url: success };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...ok, customer_email: 'x@example.com' }, 422, 'customer_id'],
      [{ ...ok, customer_id: undefined }, 422, 'customer_id'],
      [{ ...ok, coupon_id: coupon, allow_promotion_codes: true }, 422, 'allow_promotion_codes'],
      [{ ...ok, success_url: 'javascript:alert(1)' }, 422, 'success_url'],
      [{ ...ok, cancel_url: 'not a url' }, 422, 'cancel_url'],
      [{ ...ok, plan_id: 'plan_unknown' }, 422, 'plan_id'],
      [{ ...ok, plan_version: 9 }, 422, 'plan_version'],
      [{ ...ok, coupon_id: 'coupon_unknown' }, 422, 'coupon_id'],
      [{ ...ok, customer_id: 'cus_unknown' }, 422, 'customer_id'],
      [{ ...ok, trial_days: -1 }, 422, 'trial_days'],
      [{ ...ok, customer_id: undefined, customer_email: 'no-at-sign' }, 422, 'customer_email'],
    ];
    for (const [body, status, field] of cases) {
      const r = await call('POST', '/v1/checkout_sessions', body);
      t.equal(r.status, status, `${field}: ${JSON.stringify(r.body)}`);
      t.ok(
        r.body.errors?.some((e: any) => e.field === field),
        `names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    t.equal((await pg.query('SELECT count(*)::int AS n FROM checkout_sessions')).rows[0].n, before);
    const customer = await call('POST', '/v1/checkout_sessions', ok, a.tokens.write);
    t.equal(customer.status, 403, 'a customer’s token makes no checkout session');
    t.equal((await call('GET', '/v1/checkout_sessions/cs_unknown')).status, 404);
  });

  t.same(
    h.consoleErrors.filter((e) => !/status of 4(02|04|09|10|22)/.test(e)),
    [],
    'no CSP violation or script error',
  );
});
