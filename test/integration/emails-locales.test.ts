import t from 'tap';
import { execFileSync } from 'node:child_process';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';
import { startMailServer, type MailMessage } from '../fixtures/mailbox.js';
import { startDispatcher } from './webhook-delivery-helpers.js';

/**
 * Emails and credit-note PDFs in the customer's locale (docs/emails.md "Languages", issue 46): through a real SMTP
 * server (aiosmtpd, the stack's), a `de` customer's invoice, payment-failed and credit-note emails and a `ja`
 * customer's invoice email carry the locale's subject and texts, amounts and dates formatted with Intl and
 * `<html lang>`; the credit note's PDF (read with pdftotext) has the German title, labels and amounts and prints
 * the customer's and product's non-Latin names as written.
 */
const pdftotext = (pdf: Buffer) => execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
const oneLine = (s: string) => s.replace(/\s+/g, ' ');

t.test('emails and credit notes in the customer locale', async (t) => {
  const mail = await startMailServer(t);
  const w = await billingWorld(t, { SMTP_URL: mail.url, MAIL_FROM: 'billing@acme.example', SELLER_NAME: 'Acme Ltd' });
  const admin = w.operator.tokens.admin;
  await startDispatcher(t, w.config, { mail: { retryDelaysMs: Array(100).fill(150), pollIntervalMs: 50 } });
  const plan = await w.product('Ελληνικό πακέτο', 1234.5, 'EUR');
  const to = async (address: string): Promise<MailMessage[]> =>
    (await mail.messages()).filter((m) => m.rcptTo === address);
  /** A customer of `locale` with a billing email, no card (its invoice stays open), subscribed since October. */
  const customer = async (name: string, locale: string, email: string) => {
    const a = await createTestAccount(w.api.infra, { name });
    await w.made(admin, 'PATCH', `/v1/customers/${a.customerId}`, { email, locale });
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    return { a, sub: sub.id as string };
  };
  const de = await customer('Ελλάδα Α.Ε.', 'de', 'ap@de.example');
  const ja = await customer('株式会社東京テック', 'ja', 'ap@ja.example');
  const run = await w.run('2026-11-01T01:00:00Z');
  t.equal(run.code, 0, run.stderr);
  const invoiceOf = async (c: typeof de) =>
    (await w.made(c.a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
      (i: any) => i.subscription_id === c.sub,
    );

  await t.test('de: the invoice and the payment-failed email in German, 1.234,50 EUR, 01.10.2026', async (t) => {
    const inv = await invoiceOf(de);
    t.equal(inv.amount, 1234.5);
    await waitUntil(async () => (await to('ap@de.example')).length >= 2, 'the two German emails');
    const got = await to('ap@de.example');
    t.same(got.map((m) => m.headers.subject).sort(), [
      `Rechnung ${inv.number} von Acme Ltd: 1.234,50 EUR`,
      `Zahlung fehlgeschlagen für Rechnung ${inv.number} von Acme Ltd: 1.234,50 EUR`,
    ]);
    const issued = got.find((m) => m.headers.subject!.startsWith('Rechnung'))!;
    t.match(
      issued.text,
      `Anbei Ihre Rechnung ${inv.number} von Acme Ltd für den Zeitraum 01.10.2026 bis 31.10.2026: 1.234,50 EUR.`,
    );
    t.match(issued.text, 'Betrag: 1.234,50 EUR');
    t.match(issued.html, '<html lang="de">');
    t.match(issued.html, 'Rechnung ansehen und bezahlen');
    t.match(oneLine(pdftotext(issued.attachments[0]!.content)), 'RECHNUNG', 'the attached invoice PDF is German too');
    const failed = got.find((m) => m.headers.subject!.startsWith('Zahlung'))!;
    t.match(
      failed.text,
      `Wir konnten die Zahlung der Rechnung ${inv.number} (1.234,50 EUR, 01.10.2026 bis 31.10.2026)`,
    );
    // No card on file: the refusal in German, the processor's code beside it.
    t.equal(inv.last_payment_error?.code, 'no_payment_method');
    t.match(failed.text, 'Grund: Es ist keine Karte hinterlegt (no_payment_method).');
  });

  await t.test('ja: the invoice email in Japanese, 1,234.50 EUR, 2026/10/01', async (t) => {
    const inv = await invoiceOf(ja);
    await waitUntil(
      async () => (await to('ap@ja.example')).some((m) => m.headers.subject?.includes('請求書 ')),
      'the Japanese invoice email',
    );
    const m = (await to('ap@ja.example')).find(
      (x) => x.headers.subject === `Acme Ltdより：請求書 ${inv.number}：1,234.50 EUR`,
    );
    t.ok(m, 'the Japanese subject');
    t.match(m!.text, `Acme Ltdより、2026/10/01〜2026/10/31の請求書 ${inv.number}（1,234.50 EUR）を添付いたします。`);
    t.match(m!.text, '請求書番号: ');
    t.match(m!.html, '<html lang="ja">');
    t.match(m!.html, '請求書を確認して支払う');
  });

  await t.test('de: the credit note email and its PDF in German; non-Latin names round-trip', async (t) => {
    const inv = await invoiceOf(de);
    const note = await callJson(w.api.url, admin, 'POST', `/v1/billing/invoices/${inv.id}/credit-notes`, {
      amount: 1000,
      reason: 'Ausfall am 12.10. — 障害',
    });
    t.equal(note.status, 201, JSON.stringify(note.body));
    const subject = `Gutschrift zur Rechnung ${inv.number} von Acme Ltd: 1.000,00 EUR`;
    await waitUntil(
      async () => (await to('ap@de.example')).some((m) => m.headers.subject === subject),
      'the German credit note email',
    );
    const m = (await to('ap@de.example')).find((x) => x.headers.subject === subject)!;
    t.match(m.text, `Anbei eine Gutschrift über 1.000,00 EUR zur Rechnung ${inv.number} (01.10.2026 bis 31.10.2026)`);
    t.equal(m.attachments[0]?.filename, `${note.body.id}.pdf`);
    // The download route renders the same PDF as the attachment.
    const res = await fetch(`${w.api.url}/v1/billing/credit-notes/${note.body.id}/download`, {
      headers: { authorization: `Bearer ${de.a.tokens.read}` },
    });
    t.equal(res.status, 200);
    for (const pdf of [m.attachments[0]!.content, Buffer.from(await res.arrayBuffer())]) {
      const text = oneLine(pdftotext(pdf));
      for (const expected of [
        'GUTSCHRIFT',
        'Gutschriftsnummer',
        'Rechnungsdatum',
        'Vom offenen Betrag abgezogen',
        'Rechnung an',
        'Ελλάδα Α.Ε.',
        'Gutgeschriebene Rechnung',
        // The side block wraps the amount onto its next line.
        'Zeitraum 01.10.2026 bis 31.10.2026, berechnet',
        '1.234,50',
        'Grund: Ausfall am 12.10. — 障害',
        'Betrag',
        'Gutschrift gesamt',
        '1.000,00 EUR',
      ])
        t.match(text, expected, `the PDF says ${expected}`);
      t.notMatch(text, 'CREDIT NOTE', 'no English title');
    }
  });
});
