import t from 'tap';
import {
  INVOICE_LABELS,
  LOCALES,
  invoiceTexts,
  localeOf,
  localeOfAcceptLanguage,
} from '../../services/domain/invoices/invoice-texts.js';
import { EMAIL_LABELS } from '../../services/domain/emails/email-texts.js';
import { CREDIT_NOTE_LABELS } from '../../services/domain/credit-notes/credit-note-texts.js';
import { composeEmail } from '../../services/domain/emails/message.js';
import { PAGE_LABELS } from '../../services/domain/hosted-pages/page-texts.js';
import { PORTAL_LABELS, portalLocale } from '../../services/domain/portal/portal-texts.js';
import { OVERVIEW_LABELS } from '../../services/domain/portal/overview-texts.js';
import { ACCOUNT_LABELS } from '../../services/domain/portal/account-texts.js';
import { CHECKOUT_LABELS } from '../../services/domain/checkout/checkout-texts.js';
import { DECLINE_CODES, DECLINE_LABELS } from '../../services/domain/payments/decline-texts.js';

/**
 * The customer-facing texts per locale (docs/billing.md "Languages"): every table has every key of English and no
 * empty text, so no customer ever reads a missing label; English emails read as they always did.
 */
const TABLES: Record<string, Record<string, unknown>> = {
  invoice: INVOICE_LABELS,
  email: EMAIL_LABELS,
  'credit note': CREDIT_NOTE_LABELS,
  'hosted page': PAGE_LABELS,
  portal: PORTAL_LABELS,
  'portal overview': OVERVIEW_LABELS,
  'portal account pages': ACCOUNT_LABELS,
  checkout: CHECKOUT_LABELS,
  'card decline': DECLINE_LABELS,
};

/** Every leaf of a table as path → text: functions are called with sample arguments (each must use them). */
function leaves(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (typeof value === 'function') {
    const args = Array.from({ length: value.length }, (_, i) => `‹${i}›`);
    const text = String((value as (...a: string[]) => string)(...args));
    return [[`${path}()`, args.every((a) => text.includes(a)) ? text : `MISSING ARGUMENT in ${text}`]];
  }
  return Object.entries(value as object).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
}

for (const [name, table] of Object.entries(TABLES))
  t.test(`${name} texts: every locale has every key of en, none empty, every argument used`, async (t) => {
    const keys = leaves(table.en).map(([k]) => k);
    t.same(Object.keys(table).sort(), [...LOCALES].sort(), 'one table per locale');
    for (const locale of LOCALES) {
      const got = leaves(table[locale]);
      t.same(
        got.map(([k]) => k),
        keys,
        `${locale}: the keys of en`,
      );
      for (const [k, text] of got) {
        t.ok(text.trim().length > 0, `${locale} ${k} is not empty`);
        t.notMatch(text, /MISSING ARGUMENT/, `${locale} ${k} uses every argument`);
      }
    }
  });

t.test('a language tag names its locale; anything else is English', async (t) => {
  t.equal(localeOf('de'), 'de');
  t.equal(localeOf('de-DE'), 'de');
  t.equal(localeOf('es-MX'), 'es');
  t.equal(localeOf('it'), 'en');
  t.equal(localeOf(null), 'en');
  t.equal(portalLocale('es-MX', 'de'), 'es', 'a portal session’s supported language wins');
  t.equal(portalLocale('it', 'de'), 'de', 'else the customer’s');
  t.equal(portalLocale(null, null), 'en');
  t.equal(localeOfAcceptLanguage('it-IT,it;q=0.9,fr;q=0.8,de;q=0.7'), 'fr', 'the first supported by weight');
  t.equal(localeOfAcceptLanguage('de;q=0.5, ja'), 'ja', 'a higher q wins over the order');
  t.equal(localeOfAcceptLanguage('es-MX'), 'es');
  t.equal(localeOfAcceptLanguage('fr;q=0, it'), 'en', 'q=0 refuses a language');
  t.equal(localeOfAcceptLanguage(undefined), 'en');
  t.equal(invoiceTexts('ja').money('1234.5', 'EUR'), '1,234.50 EUR');
  t.equal(invoiceTexts('de').money('1234.5', 'EUR'), '1.234,50 EUR');
  t.equal(invoiceTexts('de').money('500', 'JPY'), '500 JPY', 'no decimals for a currency without minor units');
  t.equal(invoiceTexts('en').money('1234.5', 'USD'), '1,234.50 USD');
});

const invoice = {
  id: 'inv_1',
  number: '000042',
  amount: '1234.5',
  currency: 'EUR',
  period_start: '2026-10-01',
  period_end: '2026-10-31',
};
const seller = { name: 'Acme GmbH', support_email: 'help@acme.example', logo: false };

t.test('an email in the customer locale: its texts, amounts, dates and html lang', async (t) => {
  const de = composeEmail({ kind: 'invoice', invoice, seller, locale: 'de' });
  t.equal(de.subject, 'Rechnung 000042 von Acme GmbH: 1.234,50 EUR');
  t.match(
    de.text,
    'Anbei Ihre Rechnung 000042 von Acme GmbH für den Zeitraum 01.10.2026 bis 31.10.2026: 1.234,50 EUR.',
  );
  t.match(de.text, 'Fragen? Schreiben Sie an help@acme.example.');
  t.match(de.html, '<html lang="de">');
  const ja = composeEmail({ kind: 'payment_failed', invoice, seller, locale: 'ja', test: true });
  t.equal(ja.subject, '[テスト] Acme GmbHより：請求書 000042 のお支払いに失敗しました：1,234.50 EUR');
  t.match(ja.text, '請求書 000042（1,234.50 EUR、2026/10/01〜2026/10/31）のお支払いを回収できませんでした。');
  const fr = composeEmail({
    kind: 'credit_note',
    invoice,
    seller,
    locale: 'fr',
    note: { id: 'cn_1', number: '000043', amount: '1000', type: 'refund' },
  });
  t.equal(fr.subject, 'Avoir sur la facture 000042 de Acme GmbH : 1\u202f000,00 EUR');
  t.match(fr.text, 'Remboursement: 1\u202f000,00 EUR');
  const unknown = composeEmail({ kind: 'invoice', invoice, seller, locale: 'it' });
  t.equal(unknown.subject, 'Invoice 000042 from Acme GmbH: 1,234.50 EUR', 'an unknown locale is English');
});

t.test('the pay script’s messages keep their placeholders in every locale', async (t) => {
  for (const locale of LOCALES) {
    t.match(PAGE_LABELS[locale].script.failedStatus, '{status}', `${locale} failedStatus`);
    t.match(PAGE_LABELS[locale].script.saved, '{card}', `${locale} saved`);
    t.match(PAGE_LABELS[locale].script.defaultCard, '{card}', `${locale} defaultCard`);
  }
});

t.test('a refused card has a text for each code the processors report, the same set in every locale', async (t) => {
  for (const locale of LOCALES) {
    for (const code of DECLINE_CODES) t.ok(DECLINE_LABELS[locale][code], `${locale} ${code}`);
    t.ok(DECLINE_LABELS[locale].declined, `${locale} generic`);
  }
  t.equal(DECLINE_LABELS.de.card_declined, 'Ihre Karte wurde abgelehnt.');
});
