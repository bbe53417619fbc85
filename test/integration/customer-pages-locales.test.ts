import t from 'tap';
import { callJson } from '../fixtures/matrix.js';
import { screenshot } from '../fixtures/console.js';
import { hostedWorld, NOW } from '../fixtures/hosted.js';
import { monthDays } from '../fixtures/calendar.js';

/**
 * The hosted pages and the portal in the customer's locale (docs/payments.md "Hosted pages", docs/portal.md), in
 * Chromium against the real api, the billing run and the Stripe simulator: a `fr` customer's invoice page and card
 * page (`<html lang="fr">`, French texts, "20,00 USD", French dates) and pay.js's own messages in French after
 * paying and saving a card; an `es` portal session's navigation and invoices page in Spanish.
 */
/** YYYY-MM-DD… as written in fr and es: DD/MM/YYYY. */
const dmy = (iso: string) => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;

t.test('hosted pages in fr, the portal in es', async (t) => {
  const h = await hostedWorld(t);
  const { w, page, base } = h;
  const admin = w.operator.tokens.admin;
  const a = await h.customer('Société Ωmega');
  await w.made(admin, 'PATCH', `/v1/customers/${a.customerId}`, { locale: 'fr' });
  const inv = await h.openInvoice(a);
  // As a person reads it: cells and items apart (textContent runs them together).
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, cells separated, is what is checked
  const text = async (selector: string) => (await page.locator(selector).innerText()).replace(/\s+/g, ' ').trim();

  await t.test('fr: the hosted invoice page, then paid with a new card', async (t) => {
    const res = await page.goto(inv.hosted_invoice_url);
    t.equal(res!.status(), 200);
    t.equal(await page.getAttribute('html', 'lang'), 'fr');
    t.equal(await page.title(), `Facture ${inv.number} · Meterline Demo GmbH`);
    t.equal(await text('#invoice-status'), 'Ouverte');
    t.equal(await text('#buyer h2'), 'Facturé à');
    t.equal(await text('.buyer-name'), 'Société Ωmega');
    t.match(await text('.meta'), `Émise le ${dmy(NOW)} · échéance le ${dmy(NOW)}`);
    t.match(await text('.meta'), `Période du ${dmy(monthDays(0).first)} au ${dmy(monthDays(0).last)}`);
    t.equal(await text('#lines thead'), 'Description Quantité Prix unitaire Montant');
    t.equal(await text('#total'), '20,00 USD');
    t.equal(await text('#amount-due'), '20,00 USD');
    t.equal(await text('#pdf-link'), 'Télécharger le PDF');
    t.equal(await text('#pay h2'), 'Payer cette facture');
    t.equal(await text('#pay-new'), 'Payer 20,00 USD');
    await h.enterCard('4242 4242 4242 4242');
    await Promise.all([page.waitForEvent('load'), page.click('#pay-new')]);
    await page.waitForSelector('#paid-note');
    t.equal(await text('#invoice-status'), 'Payée');
    t.match(await text('#paid-note'), /^Payée le \d\d\/\d\d\/\d{4}\. Merci\.$/);
    await screenshot(page, 'hosted-invoice-fr');
  });

  await t.test('fr: the card page and the script’s message after saving a card', async (t) => {
    const link = await callJson(base, a.tokens.write, 'POST', '/v1/billing/payment-method-links', {});
    t.equal(link.status, 201, JSON.stringify(link.body));
    await page.goto(link.body.url);
    t.equal(await page.getAttribute('html', 'lang'), 'fr');
    t.equal(await text('#current-card'), 'Votre carte par défaut : visa •••• 4242');
    t.equal(await text('#save-card'), 'Enregistrer la carte');
    await h.enterCard('5555 5555 5555 4444');
    await page.click('#save-card');
    await page.waitForSelector('#pay-message.ok');
    t.equal(await text('#pay-message'), 'Enregistrée : mastercard •••• 4444 est désormais votre carte par défaut.');
    t.equal(await text('#current-card'), 'Votre carte par défaut : mastercard •••• 4444');
  });

  await t.test('es: a portal session’s navigation and invoices page', async (t) => {
    const session = await callJson(base, admin, 'POST', '/v1/portal_sessions', {
      customer_id: a.customerId,
      return_url: 'https://shop.example/account',
      locale: 'es-ES',
    });
    t.equal(session.status, 201, JSON.stringify(session.body));
    await page.goto(session.body.url);
    await page.goto(`${base}/portal/invoices`);
    t.equal(await page.getAttribute('html', 'lang'), 'es');
    t.equal(
      await text('.portal-nav'),
      'Resumen Facturas Métodos de pago Crédito y derechos Datos de facturación Volver',
    );
    t.equal(await text('h1'), 'Sus facturas');
    t.equal(await text('#invoices thead'), 'Número Fecha Importe Estado Documento');
    const row = await text(`#invoice-${inv.id}`);
    t.match(row, `${inv.number} ${dmy(NOW)} 20,00 USD Pagada Ver · PDF`);
    await screenshot(page, 'portal-invoices-es');
  });
});
