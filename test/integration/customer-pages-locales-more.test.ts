import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld } from '../fixtures/hosted.js';

/**
 * The rest of the customer's pages in its locale (docs/billing.md "Languages"), in Chromium against the real api,
 * the billing run and the Stripe simulator: a `de` customer's refused cards on the hosted invoice page (Stripe.js's
 * decline and a charge's decline, each told by its code in German) and every portal page (texts, Intl amounts and
 * dates, its refusal pages); a `fr` customer's checkout page and its script's decline text; an `es` customer's 410
 * card link; the pages that know no customer in the browser's Accept-Language, else English.
 */
t.test('portal, checkout, refused links and declines in the customer’s locale', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const admin = w.operator.tokens.admin;
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, cells separated, is what is checked
  const text = async (selector: string) => (await page.locator(selector).innerText()).replace(/\s+/g, ' ').trim();
  const a = await h.customer('Müller GmbH');
  await w.made(admin, 'PATCH', `/v1/customers/${a.customerId}`, { locale: 'de' });
  const inv = await h.openInvoice(a);

  await t.test('de: a refused card on the hosted invoice page, told by its code', async (t) => {
    await page.goto(inv.hosted_invoice_url);
    t.equal(await page.getAttribute('html', 'lang'), 'de');
    await h.enterCard('4000 0000 0000 0002');
    await page.click('#pay-new');
    await page.waitForSelector('#pay-message.error');
    t.equal(await text('#pay-message'), 'Ihre Karte wurde abgelehnt.', 'Stripe.js’s card_declined, in German');
    // A card that is saved but whose charge is refused: the server's answer names insufficient_funds.
    await h.enterCard('4000 0000 0000 9995');
    await page.click('#pay-new');
    await page.waitForFunction(() => document.getElementById('pay-message')?.textContent?.includes('gedeckt'));
    t.equal(await text('#pay-message'), 'Ihre Karte ist nicht ausreichend gedeckt. Es wurde nichts belastet.');
    await screenshot(page, 'hosted-invoice-declined-de');
    const row = await callJson(base, a.tokens.read, 'GET', `/v1/billing/invoices/${inv.id}`);
    t.equal(row.body.status, 'open', 'nothing paid');
  });

  await t.test('de: every portal page, amounts and dates formatted for de', async (t) => {
    await w.made(admin, 'POST', '/v1/billing/credits', {
      customer_id: a.customerId,
      amount: 1234.5,
      currency: 'USD',
      description: 'Startguthaben',
    });
    await w.made(admin, 'POST', '/v1/entitlements', { customer_id: a.customerId, feature: 'sso', type: 'boolean' });
    const session = await callJson(base, admin, 'POST', '/v1/portal_sessions', {
      customer_id: a.customerId,
      return_url: 'https://shop.example/account',
    });
    t.equal(session.status, 201, JSON.stringify(session.body));
    await page.goto(session.body.url);
    t.equal(await page.getAttribute('html', 'lang'), 'de', 'no session locale: the customer’s');
    t.equal(await text('h1'), 'Ihr Abonnement');
    t.match(await text('.subscription'), /Laufender Zeitraum: \d\d\.\d\d\.\d{4} bis \d\d\.\d\d\.\d{4}/);
    t.match(await text('.subscription'), /Nutzung in diesem Zeitraum .* Nächste Rechnung/);
    t.match(await text('.upcoming-amount'), /^\d+,\d\d USD$/, 'a decimal comma');
    await screenshot(page, 'portal-overview-de');

    await page.goto(`${base}/portal/payment-methods`);
    t.equal(await text('h1'), 'Zahlungsmethoden');
    t.match(await text('#cards'), /^visa •••• 9995 gültig bis \d{1,2}\/\d{4} Standard$/);
    t.equal(await text('#add-card'), 'Karte hinzufügen');

    await page.goto(`${base}/portal/balances`);
    t.equal(await text('h1'), 'Guthaben und Kontingente');
    t.equal(await text('#credit-balance'), '1.234,50 USD');
    t.match(
      await text('#credit-ledger'),
      /^Gutschriften Datum Beschreibung Gewährt Verbleibend Gültig bis \d\d\.\d\d\.\d{4} Startguthaben 1\.234,50 USD 1\.234,50 USD unbegrenzt$/,
    );
    t.equal(await text('#entitlements'), 'Funktion Dieser Zeitraum sso enthalten');

    await page.goto(`${base}/portal/billing-details`);
    t.equal(await text('h1'), 'Rechnungsdaten');
    t.equal(await text('#billing-form legend >> nth=0'), 'Rechnungsadresse');
    t.equal(await text('label[for="zip"]'), 'Postleitzahl');

    const missing = await page.goto(`${base}/portal/invoices/inv_0000000000000000000000`);
    t.equal(missing!.status(), 404);
    t.equal(await text('h1'), 'Seite nicht gefunden');
    t.equal(await text('#portal-refused'), 'Hier gibt es nichts, das zu Ihrem Konto gehört.');
    t.equal(await page.getAttribute('#portal-refused-detail', 'lang'), 'en', 'the API’s own words, marked English');

    const reused = await page.goto(session.body.url);
    t.equal(reused!.status(), 410);
    t.equal(await text('h1'), 'Dieser Link wurde bereits verwendet');
  });

  await t.test('fr: the checkout page and its script’s decline text', async (t) => {
    const b = await h.customer('Société Ωmega');
    await w.made(admin, 'PATCH', `/v1/customers/${b.customerId}`, { locale: 'fr' });
    const product = await w.product('Sièges', 20, 'USD');
    const plan = await w.made(admin, 'POST', '/v1/plans', {
      name: 'Équipe',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: product }],
    });
    const s = await w.made(admin, 'POST', '/v1/checkout_sessions', {
      plan_id: plan.id,
      customer_id: b.customerId,
      allow_promotion_codes: true,
      success_url: `${base}/healthz`,
      cancel_url: `${base}/healthz?canceled=1`,
    });
    const res = await page.goto(s.url);
    t.equal(res!.status(), 200);
    t.equal(await page.getAttribute('html', 'lang'), 'fr');
    t.equal(await page.title(), 'Paiement · Meterline Demo GmbH');
    t.equal(await text('#checkout h2'), 'S’abonner à Équipe');
    t.equal(await text('#plan-items'), 'Produit Prix Sièges 20,00 USD par mois');
    t.equal(await text('#subscribe'), 'S’abonner');
    t.equal(await text('#cancel'), 'Annuler et revenir');
    await h.enterCard('4000 0000 0000 0002');
    await page.click('#subscribe');
    await page.waitForSelector('#pay-message.error');
    t.equal(await text('#pay-message'), 'Votre carte a été refusée.');
    await screenshot(page, 'checkout-declined-fr');
    // A good card and an unknown code: the 422's code picks the French text.
    await h.enterCard('4242 4242 4242 4242');
    await page.fill('#promotion-code', 'PASDECODE');
    await page.click('#subscribe');
    await page.waitForFunction(() => document.getElementById('pay-message')?.textContent?.includes('code'));
    t.equal(await text('#pay-message'), 'Ce code promotionnel n’existe pas.');
    const after = await w.made(admin, 'GET', `/v1/checkout_sessions/${s.id}`);
    t.equal(after.status, 'open', 'nothing subscribed');
  });

  await t.test('es: a replaced card link is a 410 in Spanish; unknown links follow Accept-Language', async (t) => {
    const c = await h.customer('Compañía Ñandú');
    await w.made(admin, 'PATCH', `/v1/customers/${c.customerId}`, { locale: 'es' });
    const first = await callJson(base, c.tokens.write, 'POST', '/v1/billing/payment-method-links', {});
    await callJson(base, c.tokens.write, 'POST', '/v1/billing/payment-method-links', {});
    const gone = await page.goto(first.body.url);
    t.equal(gone!.status(), 410);
    t.equal(await page.getAttribute('html', 'lang'), 'es');
    t.equal(await text('h1'), 'Este enlace ya no funciona');
    t.match(await text('#link-refused'), /^Se revocó, se sustituyó por uno más reciente o caducó\./);
    await screenshot(page, 'hosted-link-gone-es');

    const unknown = `${base}/hosted/cards/${'A'.repeat(43)}`;
    const ja = await fetch(unknown, { headers: { 'Accept-Language': 'it-IT,ja;q=0.8' } });
    t.equal(ja.status, 404);
    const jaHtml = await ja.text();
    t.match(jaHtml, '<html lang="ja">');
    t.match(jaHtml, '<h1>ページが見つかりません</h1>');
    const plain = await fetch(unknown, { headers: { 'Accept-Language': 'it' } });
    t.match(await plain.text(), '<h1>Page not found</h1>', 'no supported language asked for: English');
    const ended = await fetch(`${base}/portal`, { headers: { 'Accept-Language': 'fr-CH, fr;q=0.9' } });
    t.equal(ended.status, 403);
    t.match(await ended.text(), '<h1>Votre session du portail est terminée</h1>');
  });

  await t.test('ja (the session’s ja-JP): the overview’s actions, flash, note and amounts', async (t) => {
    const d = await h.customer('株式会社テスト');
    const product = await w.product('Basic', 1000, 'JPY');
    const sub = await w.made(d.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: product }] });
    const session = await callJson(base, admin, 'POST', '/v1/portal_sessions', {
      customer_id: d.customerId,
      return_url: 'https://shop.example/account',
      locale: 'ja-JP',
    });
    await page.goto(session.body.url);
    t.equal(await page.getAttribute('html', 'lang'), 'ja');
    t.equal(await text('h1'), 'ご契約中のプラン');
    t.match(await text('.upcoming-amount'), /^[\d,]+ JPY$/, 'no decimals for JPY');
    t.equal(await text(`#cancel-${sub.id}`), '期間の終了時に解約する');
    await Promise.all([page.waitForEvent('load'), page.click(`#cancel-${sub.id}`)]);
    t.equal(await text('#flash'), 'サブスクリプションは現在の期間の終了時に終了します。');
    t.match(await text(`#cancel-note-${sub.id}`), /^\d{4}\/\d\d\/\d\dに終了します。$/, 'the date as ja writes it');
    t.equal(await text(`#keep-${sub.id}`), 'サブスクリプションを継続する');
    await screenshot(page, 'portal-overview-ja');
  });
});
