import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld } from '../fixtures/hosted.js';

/**
 * The hosted "update payment method" page (docs/payments.md "Hosted pages") in Chromium with the real api, the billing
 * run and the Stripe simulator: links minted by the customer or an operator (shown once, stored hashed, the newer one
 * revoking the older), a card that always needs 3-D Secure saved through the card element and its challenge, then
 * the billing run's off-session charge asking for authentication — the invoice stays open, invoice.payment_action_required
 * carries the hosted link, and the customer completes it on the hosted invoice page: paid, one charge.
 */
t.test('the hosted card page and 3-D Secure asked by the billing run', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const pg = w.api.infra.pg;
  const a = await h.customer('Card Page Customer');
  const info = await callJson(base, a.tokens.read, 'GET', '/v1/billing');
  const customerId = info.body.customer_id as string;

  let link: { id: string; url: string; expires_at: string };
  await t.test('a link for oneself, and an operator’s for a customer; a newer one revokes the older', async (t) => {
    const own = await callJson(base, a.tokens.write, 'POST', '/v1/billing/payment-method-links', {});
    t.equal(own.status, 201, JSON.stringify(own.body));
    t.match(own.body.url, new RegExp(`^${base}/hosted/cards/[A-Za-z0-9_-]{43}$`));
    t.ok(Date.parse(own.body.expires_at) > Date.now() + 6 * 86_400_000, 'valid for 7 days');
    const stored = await pg.query('SELECT token_hash FROM hosted_card_links WHERE id = $1', [own.body.id]);
    t.equal(stored.rows[0].token_hash.length, 32, 'a SHA-256 is stored…');
    t.notOk(JSON.stringify(stored.rows).includes(own.body.url.split('/').pop()), '…never the token');
    const other = await h.customer('Someone Else');
    const refused = await callJson(base, other.tokens.write, 'POST', '/v1/billing/payment-method-links', {
      customer_id: customerId,
    });
    t.equal(refused.status, 403, 'a customer makes links only for itself');
    const byOperator = await callJson(base, w.operator.tokens.admin, 'POST', '/v1/billing/payment-method-links', {
      customer_id: customerId,
    });
    t.equal(byOperator.status, 201);
    link = byOperator.body;
    const old = await page.goto(own.body.url);
    t.equal(old!.status(), 410, 'the earlier link is revoked by the newer');
    const wrong = await page.goto(`${base}/hosted/cards/${'x'.repeat(43)}`);
    t.equal(wrong!.status(), 404);
  });

  let invoice: any;
  await t.test(
    'a card that always asks for 3-D Secure is saved through the card element and its challenge',
    async (t) => {
      const res = await page.goto(link.url);
      t.equal(res!.status(), 200);
      t.match(await page.locator('#current-card').textContent(), /No card on file/);
      await h.enterCard('4000 0027 6000 3184');
      await page.click('#save-card');
      await page.frameLocator('iframe[name="stripe-challenge-frame"]').locator('#complete-auth').waitFor();
      await h.completeChallenge();
      await page.waitForSelector('#pay-message.ok');
      t.match(await page.locator('#pay-message').textContent(), /visa •••• 3184 is now your default card/);
      await screenshot(page, 'hosted-card-saved');
      const pms = await callJson(base, a.tokens.read, 'GET', '/v1/billing/payment-methods');
      t.match(pms.body.data, [{ card: { brand: 'visa', last4: '3184' }, is_default: true }]);
      t.notOk(
        h.sentToMeterline.some((r) => /3184/.test(r) && /4000/.test(r)),
        'the number never reached meterline',
      );
    },
  );

  await t.test('the run’s charge asks for 3-D Secure: open, the event carries the hosted link', async (t) => {
    invoice = await h.openInvoice(a);
    t.equal(invoice.status, 'open');
    t.match(invoice.last_payment_error, { code: 'authentication_required' });
    const events = await pg.query(
      `SELECT data FROM outbox_events WHERE type = 'invoice.payment_action_required' AND data->>'invoice_id' = $1`,
      [invoice.id],
    );
    t.equal(events.rows.length, 1);
    t.equal(events.rows[0].data.hosted_invoice_url, invoice.hosted_invoice_url);
    t.equal(await h.succeededCharges(invoice.id), 0);
  });

  await t.test('the customer completes the challenge on the hosted invoice page: paid, one charge', async (t) => {
    await page.goto(invoice.hosted_invoice_url);
    t.match(await page.locator('#pay-saved').textContent(), /Authenticate and pay 20\.00 USD with visa •••• 3184/);
    t.equal(await page.locator('#awaiting-note').count(), 1);
    await page.click('#pay-saved');
    await page.frameLocator('iframe[name="stripe-challenge-frame"]').locator('#complete-auth').waitFor();
    await Promise.all([page.waitForEvent('load'), h.completeChallenge()]);
    await page.waitForSelector('#paid-note');
    t.equal((await page.locator('#invoice-status').textContent())?.trim(), 'Paid');
    const intents = await h.intentsOf(invoice.id);
    t.equal(intents.length, 1, 'the run’s own PaymentIntent was completed, no second one made');
    t.equal(intents[0]!.status, 'succeeded');
    t.equal(await h.succeededCharges(invoice.id), 1, 'exactly one charge');
    const paid = await pg.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'invoice.paid' AND data->>'invoice_id' = $1`,
      [invoice.id],
    );
    t.equal(paid.rows[0].n, 1, 'one invoice.paid (the page and the webhook settle it once)');
    await screenshot(page, 'hosted-invoice-3ds-paid');
  });

  t.same(
    h.consoleErrors.filter((e) => !/status of 4(02|04|10)/.test(e)),
    [],
    'no CSP violation or script error',
  );
});
