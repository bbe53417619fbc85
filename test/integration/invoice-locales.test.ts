import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingWorld } from '../fixtures/billing.js';
import { callJson } from '../fixtures/matrix.js';
import { customerToken } from '../fixtures/operator.js';
import { readPdf } from '../fixtures/pdf.js';

/**
 * Unicode and localized invoices (issue 46, docs/billing.md "Languages"): the PDF embeds Noto fonts, so customer,
 * seller and product names in Latin, Greek, Cyrillic, Arabic, Hebrew (right to left) and CJK print as written; a
 * customer's `locale` (en, de, fr, es, ja) chooses the fixed texts and the formats of amounts and dates. Invoices
 * issued by `meterline billing run` on the real servers, rendered by the api, turned into PNGs (pdftoppm) and read
 * back as text (pdftotext, and the drawn text through the fonts' ToUnicode maps).
 */
const BIDI_MARKS = /[\u200e\u200f\u202a-\u202e]/g;
const pdftotext = (pdf: Buffer) =>
  execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8').replace(BIDI_MARKS, '');

t.test('invoices in five languages: every name round-trips, texts and formats per locale', async (t) => {
  const w = await billingWorld(t, {
    SELLER_NAME: '株式会社メーターライン',
    SELLER_ADDRESS: 'Οδός Ερμού 1\\nΑθήνα 105 63',
    SELLER_TAX_ID: 'EL123456789',
    INVOICE_FOOTER: 'Спасибо — ありがとう — شكرا',
  });
  const ADMIN = w.operator.tokens.admin;
  const product = async (name: string, price: number) =>
    (await w.made(ADMIN, 'POST', '/v1/products', { name, price, currency: 'EUR' })).id as string;
  const products = [
    await product('Ελληνικό πακέτο', 1234.5),
    await product('Тариф «Москва»', 0.07),
    await product('שירות ענן', 10),
    await product('خدمة سحابية', 5),
    await product('株式会社プラン ₹', 100),
  ];
  const names = ['Ελληνικό πακέτο', 'Тариф «Москва»', 'שירות ענן', 'خدمة سحابية', '株式会社プラン ₹'];
  const cases = [
    {
      locale: 'en',
      name: 'Łukasz Müller GmbH',
      city: 'Kraków',
      expect: [
        'INVOICE',
        'Invoice number',
        'Bill to',
        'Billing period',
        '2026-10-01 to 2026-10-31',
        'Total',
        '1,349.57 EUR',
      ],
    },
    {
      locale: 'de',
      name: 'Ελλάδα Α.Ε.',
      city: 'Θεσσαλονίκη',
      expect: [
        'RECHNUNG',
        'Rechnungsnummer',
        'Rechnung an',
        'Abrechnungszeitraum',
        '01.10.2026 bis 31.10.2026',
        'Gesamtbetrag',
        '1.349,57 EUR',
        '1.234,50',
      ],
    },
    {
      locale: 'fr',
      name: 'ООО «Ромашка»',
      city: 'Москва',
      expect: [
        'FACTURE',
        'Numéro de facture',
        'Facturé à',
        'Période de facturation',
        'du 01/10/2026 au 31/10/2026',
        'Total',
        // A narrow no-break space groups the thousands; the test's \s+ → ' ' makes it a space.
        '1 349,57 EUR',
      ],
    },
    {
      locale: 'es',
      name: 'شركة الخليج',
      city: 'الكويت',
      expect: [
        'FACTURA',
        'Número de factura',
        'Facturar a',
        'Periodo de facturación',
        'del 01/10/2026 al 31/10/2026',
        '1349,57 EUR',
      ],
    },
    {
      locale: 'ja',
      name: '株式会社東京テック',
      city: '東京都',
      expect: ['請求書', '請求書番号', '請求先', '請求期間', '2026/10/01〜2026/10/31', '合計', '1,349.57 EUR'],
    },
  ];
  const hebrew = 'חברת אור בע"מ';
  const pngDir = mkdtempSync(join(tmpdir(), 'invoice-locales-'));

  await t.test('locale is a customer field: en by default, one of five, 422 otherwise', async (t) => {
    const made = await w.made(ADMIN, 'POST', '/v1/customers', { name: 'Default Co', external_id: 'locale-default' });
    t.equal(made.locale, 'en', 'default en');
    const bad = await callJson(w.api.url, ADMIN, 'PATCH', `/v1/customers/${made.id}`, { locale: 'it' });
    t.equal(bad.status, 422);
    t.ok(
      bad.body.errors?.some((e: { field: string }) => e.field === 'locale'),
      'names locale',
    );
    const changed = await w.made(ADMIN, 'PATCH', `/v1/customers/${made.id}`, { locale: 'ja' });
    t.equal(changed.locale, 'ja');
    t.equal((await w.made(ADMIN, 'GET', `/v1/customers/${made.id}`)).locale, 'ja', 'reads back');
  });

  for (const [i, c] of cases.entries()) {
    await t.test(`${c.locale}: ${c.name}`, async (t) => {
      const customer = await w.made(ADMIN, 'POST', '/v1/customers', {
        name: c.name,
        external_id: `locale-${c.locale}`,
        locale: c.locale,
        legal_name: i === 0 ? `${c.name} / ${hebrew}` : c.name,
        address: { line1: `${c.city} 1`, city: c.city, postal_code: '10001', country: 'DE' },
      });
      t.equal(customer.locale, c.locale);
      const sub = await w.made(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: customer.id,
        items: products.map((product_id) => ({ product_id })),
      });
      await w.backdate(sub.id, '2026-10-05T00:00:00Z');
      const run = await w.run('2026-11-01T01:00:00Z');
      t.equal(run.code, 0, run.stderr.slice(-2000));
      const invoice = (
        await w.made(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${customer.id}&per_page=100`)
      ).data.find((x: { subscription_id: string }) => x.subscription_id === sub.id);
      // 1,234.50 + 0.07 + 10 + 5 + 100 = 1,349.57, the same in every language.
      t.equal(invoice.amount, 1349.57);
      const token = await customerToken(w.api.infra, customer.account_id, ['read']);
      const res = await fetch(`${w.api.url}/v1/billing/invoices/${invoice.id}/download`, {
        headers: { authorization: `Bearer ${token}` },
      });
      t.equal(res.status, 200);
      const pdf = Buffer.from(await res.arrayBuffer());
      const text = pdftotext(pdf);
      const flat = text.replace(/\s+/g, ' ');
      for (const name of [c.name, c.city, ...names, '株式会社メーターライン', 'Οδός Ερμού 1', 'Αθήνα 105 63'])
        t.ok(text.includes(name), `“${name}” prints as written`);
      if (i === 0) t.ok(text.includes(hebrew), `the Hebrew legal name “${hebrew}” reads right to left, as written`);
      for (const shown of c.expect) t.ok(flat.includes(shown), `${c.locale}: shows “${shown}”`);
      t.ok(flat.includes('Спасибо — ありがとう'), 'the footer');
      t.notOk(text.includes('?'), 'no character replaced by ?');
      t.ok(readPdf(pdf).text.includes(invoice.number), 'the drawn text reads back through the embedded fonts');
      execFileSync('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', '-', join(pngDir, c.locale)], {
        input: pdf,
      });
      const png = readdirSync(pngDir).find((f) => f.startsWith(`${c.locale}-`) && f.endsWith('.png'));
      t.ok(png && statSync(join(pngDir, png)).size > 5000, `rendered to a PNG (${png})`);
    });
  }
});
