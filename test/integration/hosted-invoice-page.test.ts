import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld } from '../fixtures/hosted.js';

/**
 * The hosted invoice page (docs/payments.md "Hosted pages") in Chromium against the real api, `meterline billing run`
 * and the Stripe simulator serving its Stripe.js stand-in: the link on every finalized invoice and in invoice.created,
 * the document with every customer string escaped under a strict CSP, paying with a new card in the card element
 * (the number never reaches meterline), 3-D Secure completed on the page with one charge, a decline's reason, a
 * double submit charging once, and links that are refused when revoked, rotated away or not the invoice's.
 */
t.test('the hosted invoice page', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const pg = w.api.infra.pg;
  const status = async () => (await page.locator('#invoice-status').textContent())?.trim();

  const evil = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2"> & "Co"';
  const a = await h.customer(evil);
  const invA = await h.openInvoice(a);

  await t.test('a finalized invoice has an unguessable hosted_invoice_url, also in invoice.created', async (t) => {
    t.equal(invA.status, 'open');
    t.match(invA.hosted_invoice_url, new RegExp(`^${base}/hosted/invoices/${invA.id}/[A-Za-z0-9_-]{43}$`));
    const created = await pg.query(
      `SELECT data FROM outbox_events WHERE type = 'invoice.created' AND data->>'invoice_id' = $1`,
      [invA.id],
    );
    t.equal(created.rows[0].data.hosted_invoice_url, invA.hosted_invoice_url);
    // Only operators' revocations are stored; the token itself nowhere.
    const token = invA.hosted_invoice_url.split('/').pop();
    const dump = await pg.query(`SELECT count(*)::int AS n FROM hosted_invoice_links WHERE invoice_id = $1`, [invA.id]);
    t.equal(dump.rows[0].n, 0);
    t.notOk(JSON.stringify((await pg.query('SELECT * FROM invoices WHERE id = $1', [invA.id])).rows).includes(token));
  });

  await t.test(
    'the page shows seller, buyer, lines, tax, totals and status; every customer string is escaped',
    async (t) => {
      const res = await page.goto(invA.hosted_invoice_url);
      t.equal(res!.status(), 200);
      const csp = res!.headers()['content-security-policy']!;
      t.match(csp, /default-src 'none'/);
      t.match(csp, new RegExp(`script-src 'self' ${h.sim.url}`));
      t.match(csp, /frame-ancestors 'none'/);
      t.equal(res!.headers()['referrer-policy'], 'no-referrer');
      t.equal(await status(), 'Open');
      t.equal(await page.locator('.buyer-name').textContent(), evil, 'the name is shown as text');
      t.equal(await page.evaluate(() => (window as any).__pwned), undefined, 'no injected script ran');
      t.match(await page.locator('#seller').textContent(), /Meterline Demo GmbH[\s\S]*Hauptstraße 1[\s\S]*DE123456789/);
      t.match(await page.locator('#lines tbody').textContent(), /Team plan[\s\S]*20\.00 USD/);
      t.match(await page.locator('#tax').textContent(), /0\.00 USD/);
      t.equal(await page.locator('#total').textContent(), '20.00 USD');
      t.equal(await page.locator('#amount-due').textContent(), '20.00 USD');
      t.equal(await page.locator('#invoice-number').textContent(), invA.number);
      const pdf = await page.evaluate(async () => {
        const r = await fetch((document.getElementById('pdf-link') as HTMLAnchorElement).href);
        return {
          status: r.status,
          type: r.headers.get('content-type'),
          magic: new TextDecoder().decode((await r.arrayBuffer()).slice(0, 5)),
        };
      });
      t.same(pdf, { status: 200, type: 'application/pdf', magic: '%PDF-' }, 'the PDF through the token');
      t.equal(await page.locator('#pay-saved').count(), 0, 'no saved card to offer');
      await page.frameLocator('iframe[name="stripe-card-element"]').locator('input[name="cardnumber"]').waitFor();
      await screenshot(page, 'hosted-invoice-open');
    },
  );

  await t.test(
    'a new card in the card element pays the open invoice: one charge, the card saved as default',
    async (t) => {
      await page.goto(invA.hosted_invoice_url);
      await h.enterCard('4242 4242 4242 4242');
      await Promise.all([page.waitForEvent('load'), page.click('#pay-new')]);
      await page.waitForSelector('#paid-note');
      t.equal(await status(), 'Paid');
      t.equal(await page.locator('#pay').count(), 0, 'no Pay form on a paid invoice');
      const intents = await h.intentsOf(invA.id);
      t.equal(intents.length, 1);
      t.match(intents[0], { status: 'succeeded', amount: 2000, currency: 'usd', metadata: { invoice_id: invA.id } });
      t.equal(await h.succeededCharges(invA.id), 1);
      const pms = await callJson(base, a.tokens.read, 'GET', '/v1/billing/payment-methods');
      t.match(pms.body.data, [{ card: { brand: 'visa', last4: '4242' }, is_default: true }]);
      t.notOk(
        h.sentToMeterline.some((r) => /4242\s*4242|4242424242424242/.test(r)),
        'the card number never reached meterline',
      );
      t.ok(
        h.sentToMeterline.some((r) => /"payment_method":"pm_/.test(r)),
        'only the pm_ id did',
      );
      await screenshot(page, 'hosted-invoice-paid');
    },
  );

  await t.test('4000 0025 0000 3155: the 3-D Secure challenge on the page, then paid with one charge', async (t) => {
    const b = await h.customer('Secure Buyer Ltd');
    const inv = await h.openInvoice(b);
    await page.goto(inv.hosted_invoice_url);
    await h.enterCard('4000002500003155');
    await page.click('#pay-new');
    await page.frameLocator('iframe[name="stripe-challenge-frame"]').locator('#complete-auth').waitFor();
    await screenshot(page, 'hosted-invoice-3ds');
    await Promise.all([page.waitForEvent('load'), h.completeChallenge()]);
    await page.waitForSelector('#paid-note');
    t.equal(await status(), 'Paid');
    t.equal(await h.succeededCharges(inv.id), 1, 'exactly one charge');
    const row = await callJson(base, b.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`);
    t.equal(row.body.status, 'paid');
  });

  await t.test("4000 0000 0000 0002: Stripe's decline reason on the page, nothing charged", async (t) => {
    const c = await h.customer('Declined Buyer');
    const inv = await h.openInvoice(c);
    await page.goto(inv.hosted_invoice_url);
    await h.enterCard('4000000000000002');
    await page.click('#pay-new');
    await page.waitForSelector('#pay-message.error');
    t.equal(await page.locator('#pay-message').textContent(), 'Your card was declined.');
    t.ok(await page.locator('#pay-new').isEnabled(), 'the form can be used again');
    await screenshot(page, 'hosted-invoice-declined');
    t.equal((await h.intentsOf(inv.id)).length, 0);
    const row = await callJson(base, c.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`);
    t.equal(row.body.status, 'open');
    const pms = await callJson(base, c.tokens.read, 'GET', '/v1/billing/payment-methods');
    t.equal(pms.body.data.length, 0, 'the declined card is not stored');
  });

  await t.test('a double click and a resent form pay once: the form names its attempt', async (t) => {
    const d = await h.customer('Double Clicker');
    const inv = await h.openInvoice(d);
    t.equal(
      (
        await callJson(base, d.tokens.write, 'POST', '/v1/billing/payment-methods', {
          type: 'card',
          payment_method: 'pm_card_visa',
        })
      ).status,
      201,
    );
    await page.goto(inv.hosted_invoice_url);
    const attempt = Number(await page.locator('#pay-saved').getAttribute('data-attempt'));
    t.equal(attempt, inv.attempt_count + 1);
    // Three submissions of the same form at once, as a double click and a refresh would send them.
    const answers = await page.evaluate(async (n) => {
      const post = () =>
        fetch(`${location.pathname}/pay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ attempt: n }),
        }).then((r) => r.json());
      return Promise.all([post(), post(), post()]);
    }, attempt);
    t.same(
      answers.map((x: any) => x.status),
      ['paid', 'paid', 'paid'],
    );
    // The page's script reloads the page itself once the answer says paid: wait for that load, not a second one.
    const reloaded = page.waitForEvent('load', { timeout: 30_000 });
    await page.dblclick('#pay-saved').catch(() => undefined);
    await reloaded;
    t.equal(await status(), 'Paid');
    const intents = await h.intentsOf(inv.id);
    t.equal(intents.length, 1, 'one PaymentIntent');
    t.equal(await h.succeededCharges(inv.id), 1, 'one charge');
    const attempts = await pg.query(
      `SELECT count(*)::int AS n FROM payment_attempts WHERE invoice_id = $1 AND manual`,
      [inv.id],
    );
    t.equal(attempts.rows[0].n, 1, 'one manual attempt');
  });

  await t.test('revoked and rotated links are refused (410); a link never opens another invoice (404)', async (t) => {
    const e = await h.customer('Other Customer');
    const invE = await h.openInvoice(e);
    const tokenOf = (url: string) => url.split('/').pop()!;
    // Another customer's token with this invoice's id, a made-up token, an unknown invoice: 404, nothing shown.
    for (const url of [
      `${base}/hosted/invoices/${invA.id}/${tokenOf(invE.hosted_invoice_url)}`,
      `${base}/hosted/invoices/${invE.id}/${tokenOf(invA.hosted_invoice_url)}`,
      `${base}/hosted/invoices/${invA.id}/${'A'.repeat(43)}`,
      `${base}/hosted/invoices/inv_unknown/${tokenOf(invA.hosted_invoice_url)}`,
    ]) {
      const res = await page.goto(url);
      t.equal(res!.status(), 404, url);
      t.equal(await page.locator('#invoice-number').count(), 0);
      const pay = await fetch(`${url}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attempt: 9 }),
      });
      t.equal(pay.status, 404);
    }
    // Only an operator revokes; a customer's token may not.
    const denied = await callJson(base, e.tokens.write, 'POST', `/v1/billing/invoices/${invE.id}/hosted-link/revoke`);
    t.equal(denied.status, 403);
    const revoked = await callJson(
      base,
      w.operator.tokens.admin,
      'POST',
      `/v1/billing/invoices/${invE.id}/hosted-link/revoke`,
    );
    t.same(revoked.body, { invoice_id: invE.id, hosted_invoice_url: null });
    t.equal(
      (await callJson(base, e.tokens.read, 'GET', `/v1/billing/invoices/${invE.id}`)).body.hosted_invoice_url,
      null,
    );
    let res = await page.goto(invE.hosted_invoice_url);
    t.equal(res!.status(), 410);
    t.match(await page.locator('#link-refused').textContent(), /revoked/);
    await screenshot(page, 'hosted-invoice-revoked');
    const pdf = await fetch(`${invE.hosted_invoice_url}/pdf`);
    t.equal(pdf.status, 410, 'nor its PDF');
    const rotated = await callJson(
      base,
      w.operator.tokens.admin,
      'POST',
      `/v1/billing/invoices/${invE.id}/hosted-link/rotate`,
    );
    t.not(rotated.body.hosted_invoice_url, invE.hosted_invoice_url);
    t.equal(
      (await callJson(base, e.tokens.read, 'GET', `/v1/billing/invoices/${invE.id}`)).body.hosted_invoice_url,
      rotated.body.hosted_invoice_url,
    );
    res = await page.goto(rotated.body.hosted_invoice_url);
    t.equal(res!.status(), 200);
    t.equal(await page.locator('#invoice-number').textContent(), invE.number);
    res = await page.goto(invE.hosted_invoice_url);
    t.equal(res!.status(), 410, 'the old link stays refused');
  });

  // The 404 / 410 pages and the simulator's 402 for the declined card are answers, not errors of the page.
  t.same(
    h.consoleErrors.filter((e) => !/status of 4(02|04|10)/.test(e)),
    [],
    'no CSP violation or script error',
  );
});
