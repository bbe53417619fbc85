import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { readPdf } from '../fixtures/pdf.js';
import { waitUntil } from '../fixtures/env.js';
import { startMailServer, type MailMessage } from '../fixtures/mailbox.js';
import { SANDBOX_INSUFFICIENT_FUNDS_CARD } from '../../services/domain/payments/sandbox.js';
import { recordEmails } from '../../services/domain/emails/store.js';
import { emailMessageId } from '../../services/domain/emails/message.js';
import { startDispatcher } from './webhook-delivery-helpers.js';

/**
 * Invoice emails (docs/emails.md) through a real SMTP server (aiosmtpd, the stack's): the issued invoice, a failed
 * payment and a credit note each reach the customer's billing email once, with the document's PDF attached and
 * HTML and plain-text parts (links to the hosted pages when they mint one); an SMTP outage delays them (retried on
 * the webhook schedule, emailed_at stays null) and each still arrives exactly once; a customer without a billing
 * email gets none and leaves nothing pending; a test clock's customer gets its emails marked as a test; the seller
 * settings give the From, Reply-To, name and logo. Two dispatchers run throughout.
 */
const FROM = 'Acme Billing <billing@acme.example>';

t.test('invoice emails', async (t) => {
  const mail = await startMailServer(t);
  const w = await billingWorld(t, { SMTP_URL: mail.url, MAIL_FROM: FROM, SELLER_NAME: 'Acme Ltd' });
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  // Real time, short retries: an attempt during the outage fails and the next follows within a fraction of a second.
  // Two dispatchers, as a deployment runs them: they share the events and claim emails under leases.
  // The emails carry the hosted pages' own links (services/domain/emails/links.ts, hostedEmailLinks).
  for (let i = 0; i < 2; i++)
    await startDispatcher(t, w.config, { mail: { retryDelaysMs: Array(100).fill(150), pollIntervalMs: 50 } });
  const plan = await w.product('Plan', 49.99, 'USD');

  /** A customer with a billing email (none: `email` null), optionally a working card, subscribed since October. */
  const customer = async (name: string, email: string | null, card: string | null = '4242424242424242') => {
    const a = await createTestAccount(w.api.infra, { name });
    if (email) await w.made(admin, 'PATCH', `/v1/customers/${a.customerId}`, { email });
    if (card) await w.card(a, card);
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    await w.backdate(sub.id, '2026-10-05T00:00:00Z');
    return { a, sub: sub.id as string };
  };
  const closeOctober = async () => {
    const run = await w.run('2026-11-01T01:00:00Z');
    t.equal(run.code, 0, run.stderr);
  };
  const invoiceOf = async (a: TestAccount, sub: string) =>
    (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.find(
      (i: any) => i.subscription_id === sub,
    );
  const getInvoice = (a: TestAccount, id: string) => w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${id}`);
  const to = async (address: string): Promise<MailMessage[]> =>
    (await mail.messages()).filter((m) => m.rcptTo === address);
  const emailsOf = async (accountId: string) =>
    (
      await pg.query(
        'SELECT kind, status, attempts, recipient, event_id FROM invoice_emails WHERE account_id = $1 ORDER BY id',
        [accountId],
      )
    ).rows;
  const pdfOf = (m: MailMessage) => {
    t.equal(m.attachments.length, 1, 'one attachment');
    const [att] = m.attachments;
    t.equal(att!.contentType, 'application/pdf');
    t.equal(att!.content.subarray(0, 5).toString('latin1'), '%PDF-', 'the attachment is a PDF');
    return readPdf(att!.content).text;
  };

  await t.test(
    'an issued invoice: one email to the billing email, its PDF attached; emailed_at once sent',
    async (t) => {
      const address = 'ap@paid-co.example';
      const { a, sub } = await customer('Paid Co', address);
      await closeOctober();
      const inv = await invoiceOf(a, sub);
      t.match(inv, { status: 'paid', amount: 49.99 });
      await waitUntil(async () => (await getInvoice(a, inv.id)).emailed_at !== null, 'the invoice to be emailed');
      const got = await to(address);
      t.equal(got.length, 1, 'exactly one email');
      const m = got[0]!;
      t.equal(m.headers.to, address);
      t.equal(m.headers.from, FROM);
      t.equal(m.headers.subject, `Invoice ${inv.number} from Acme Ltd: 49.99 USD`);
      t.match(m.text, `Your invoice ${inv.number} from Acme Ltd for 2026-10-01 to 2026-10-31 is attached: 49.99 USD.`);
      t.match(inv.hosted_invoice_url, /\/hosted\/invoices\/inv_/);
      t.ok(m.text.includes(`View and pay the invoice: ${inv.hosted_invoice_url}`), 'the hosted invoice page is linked');
      t.match(m.headers['content-type'], /^multipart\/mixed/);
      t.match(m.html, `Your invoice ${inv.number} from Acme Ltd for 2026-10-01 to 2026-10-31 is attached: 49.99 USD.`);
      t.ok(m.html.includes(`<a href="${inv.hosted_invoice_url}"`), 'the HTML part links the hosted page');
      t.equal(m.attachments[0]?.filename, `${inv.id}.pdf`);
      const text = pdfOf(m);
      t.match(text, inv.number, 'the PDF is this invoice');
      t.match(text, '49.99');
      const rows = await emailsOf(a.accountId);
      t.match(rows, [{ kind: 'invoice', status: 'sent', attempts: 1, recipient: address }]);
      t.equal(m.headers['message-id'], emailMessageId(rows[0].event_id, address, FROM), 'the stable Message-ID');
      const shown = await getInvoice(a, inv.id);
      t.ok(Date.parse(shown.emailed_at) >= Date.parse(inv.created_at), `emailed_at ${shown.emailed_at}`);

      // The same event fanned out again (a redelivery) records no second email; nothing more is sent.
      const event = (
        await pg.query('SELECT id, type, account_id, data FROM outbox_events WHERE id = $1', [rows[0].event_id])
      ).rows[0];
      t.equal(await recordEmails(pg, [event], new Date()), 0, 'a redelivered event adds no email');
      await closeOctober(); // nothing left to close: no new event
      t.equal((await to(address)).length, 1, 'still one email');
      t.equal((await getInvoice(a, inv.id)).emailed_at, shown.emailed_at, 'emailed_at does not move');
    },
  );

  await t.test('a failed payment: the invoice email and a payment-failure email, each with the PDF', async (t) => {
    const address = 'ap@short-co.example';
    const { a, sub } = await customer('Short Co', address, SANDBOX_INSUFFICIENT_FUNDS_CARD);
    await closeOctober();
    const inv = await invoiceOf(a, sub);
    t.match(inv, { status: 'open', attempt_count: 1, last_payment_error: { code: 'insufficient_funds' } });
    await waitUntil(async () => (await to(address)).length >= 2, 'two emails');
    const got = await to(address);
    t.same(got.map((m) => m.headers.subject).sort(), [
      `Invoice ${inv.number} from Acme Ltd: 49.99 USD`,
      `Payment failed for invoice ${inv.number} from Acme Ltd: 49.99 USD`,
    ]);
    const failure = got.find((m) => m.headers.subject!.startsWith('Payment failed'))!;
    t.match(failure.text, `We could not collect the payment of invoice ${inv.number} (49.99 USD`);
    t.match(failure.text, 'What failed: Your card has insufficient funds (insufficient_funds).');
    const cardLink = /Update payment method: (\S+\/hosted\/cards\/\S+)/.exec(failure.text)?.[1];
    t.ok(cardLink, 'the card-update link (a hosted card page of this customer)');
    t.ok(failure.html.includes(`href="${cardLink}"`), 'the HTML part has the same card-update link');
    t.match(pdfOf(failure), inv.number);
    await waitUntil(async () => (await getInvoice(a, inv.id)).emailed_at !== null, 'emailed_at');
    t.match(await emailsOf(a.accountId), [
      { kind: 'invoice', status: 'sent' },
      { kind: 'payment_failed', status: 'sent' },
    ]);
  });

  await t.test('a credit note: an email with the credit note PDF', async (t) => {
    const address = 'ap@credit-co.example';
    const { a, sub } = await customer('Credit Co', address, null); // no card: the invoice stays open
    await closeOctober();
    const inv = await invoiceOf(a, sub);
    const note = await callJson(w.api.url, admin, 'POST', `/v1/billing/invoices/${inv.id}/credit-notes`, {
      amount: 10,
      reason: 'Outage on 2026-10-12',
    });
    t.equal(note.status, 201, JSON.stringify(note.body));
    const subject = `Credit note for invoice ${inv.number} from Acme Ltd: 10.00 USD`;
    await waitUntil(
      async () => (await to(address)).some((m) => m.headers.subject === subject),
      'the credit note email',
    );
    const m = (await to(address)).find((x) => x.headers.subject === subject)!;
    t.equal(m.attachments[0]?.filename, `${note.body.id}.pdf`);
    t.match(m.text, `A credit of 10.00 USD on invoice ${inv.number}`);
    const text = pdfOf(m);
    t.match(text, note.body.id, 'the PDF is the credit note');
    t.match(text, 'Outage on 2026-10-12');
    // No card: the invoice, its failed payment and the credit note, once each.
    await waitUntil(async () => (await to(address)).length >= 3, 'the three emails of Credit Co');
    t.same((await to(address)).map((x) => x.headers.subject).sort(), [
      subject,
      `Invoice ${inv.number} from Acme Ltd: 49.99 USD`,
      `Payment failed for invoice ${inv.number} from Acme Ltd: 49.99 USD`,
    ]);
  });

  await t.test('no billing email: no email, nothing pending, emailed_at stays null', async (t) => {
    const silent = await customer('Silent Co', null);
    const witness = await customer('Witness Co', 'ap@witness-co.example');
    await closeOctober();
    const inv = await invoiceOf(silent.a, silent.sub);
    // Both invoices' events are fanned out in order; once the witness's email is out, the silent one's was seen.
    const winv = await invoiceOf(witness.a, witness.sub);
    await waitUntil(async () => (await getInvoice(witness.a, winv.id)).emailed_at !== null, "the witness's email");
    const published = await pg.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE account_id = $1 AND type = 'invoice.created' AND published_at IS NOT NULL`,
      [silent.a.accountId],
    );
    t.equal(published.rows[0].n, 1, 'its invoice.created was published');
    t.same(await emailsOf(silent.a.accountId), [], 'no email recorded');
    t.equal((await getInvoice(silent.a, inv.id)).emailed_at, null);
    t.notOk(
      (await mail.messages()).some((m) => m.headers.subject?.includes(inv.number)),
      'no email about its invoice arrived',
    );
    t.equal((await to('ap@witness-co.example')).length, 1, "the witness's one email");

    const pending = await pg.query(`SELECT count(*)::int AS n FROM invoice_emails WHERE status <> 'sent'`);
    t.equal(pending.rows[0].n, 0, 'nothing pending or failed');
  });

  await t.test('a test clock’s customer: its invoice email is sent, marked as a test', async (t) => {
    const address = 'ap@clocked-co.example';
    const clocked = await createTestAccount(w.api.infra, { name: 'Clocked Co' });
    await w.made(admin, 'PATCH', `/v1/customers/${clocked.customerId}`, { email: address });
    await w.card(clocked, '4242424242424242');
    const clock = await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-10-05T00:00:00Z' });
    await w.made(admin, 'POST', `/v1/test_clocks/${clock.id}/customers`, { customer_id: clocked.customerId });
    const sub = await w.made(admin, 'POST', '/v1/subscriptions', {
      customer_id: clocked.customerId,
      items: [{ product_id: plan }],
    });
    await w.made(admin, 'POST', `/v1/test_clocks/${clock.id}/advance`, { frozen_time: '2026-11-06T00:00:00Z' });
    const inv = await invoiceOf(clocked, sub.id);
    t.ok(inv, 'the advance issued the first month’s invoice');
    await waitUntil(async () => (await to(address)).length >= 1, 'the clocked customer’s email');
    const [m] = await to(address);
    t.equal(m!.headers.subject, `[Test] Invoice ${inv.number} from Acme Ltd: 49.99 USD`);
    t.match(m!.text, /^Test email: this customer is on a test clock/);
    t.match(m!.html, 'Test email: this customer is on a test clock');
    t.match(pdfOf(m!), inv.number);
    // The SMTP server has the message a moment before the dispatcher records it as sent.
    await waitUntil(
      async () => (await emailsOf(clocked.accountId)).every((e: any) => e.status === 'sent'),
      'the email recorded as sent',
    );
    t.match(await emailsOf(clocked.accountId), [{ kind: 'invoice', status: 'sent' }]);
  });

  await t.test('an SMTP outage: emails wait (emailed_at null), then each arrives exactly once', async (t) => {
    await mail.stop();
    const addresses = ['ap@outage-1.example', 'ap@outage-2.example', 'ap@outage-3.example'];
    const cs: { address: string; a: TestAccount; sub: string }[] = [];
    for (const [i, address] of addresses.entries()) cs.push({ address, ...(await customer(`Outage ${i}`, address)) });
    await closeOctober();
    const invoices = await Promise.all(cs.map((c) => invoiceOf(c.a, c.sub)));
    // Every email has failed at least twice against the stopped server and is still pending.
    await waitUntil(async () => {
      const rows = (await Promise.all(cs.map((c) => emailsOf(c.a.accountId)))).flat();
      return rows.length === cs.length && rows.every((r) => r.status === 'pending' && r.attempts >= 2);
    }, 'failed attempts during the outage');
    for (const [i, c] of cs.entries())
      t.equal((await getInvoice(c.a, invoices[i].id)).emailed_at, null, `${c.address}: not emailed yet`);
    await mail.start();
    await waitUntil(
      async () =>
        (await Promise.all(cs.map((c, i) => getInvoice(c.a, invoices[i].id)))).every((x) => x.emailed_at !== null),
      'every invoice emailed after the outage',
    );
    // A few more polls of the dispatcher: nothing is sent again.
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, c] of cs.entries()) {
      const got = await to(c.address);
      t.equal(got.length, 1, `${c.address}: exactly one email`);
      t.equal(got[0]?.headers.subject, `Invoice ${invoices[i].number} from Acme Ltd: 49.99 USD`);
      pdfOf(got[0]!);
      const [row] = await emailsOf(c.a.accountId);
      t.equal(row.status, 'sent');
      t.ok(row.attempts >= 3, `${c.address}: sent on attempt ${row.attempts}`);
    }
  });

  await t.test('the seller settings: From, Reply-To, the name in subjects and the logo inline', async (t) => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const set = await callJson(w.api.url, admin, 'PATCH', '/v1/seller_settings', {
      legal_name: 'Initech GmbH',
      email_from: 'invoices@initech.example',
      support_email: 'help@initech.example',
      logo: `data:image/png;base64,${png}`,
    });
    t.equal(set.status, 200, JSON.stringify(set.body));
    const address = 'ap@branded-co.example';
    const { a, sub } = await customer('Branded Co', address);
    await closeOctober();
    const inv = await invoiceOf(a, sub);
    await waitUntil(async () => (await to(address)).length >= 1, 'the branded email');
    const [m] = await to(address);
    t.equal(m!.headers.from, 'Initech GmbH <invoices@initech.example>');
    t.equal(m!.headers['reply-to'], 'help@initech.example');
    t.equal(m!.headers.subject, `Invoice ${inv.number} from Initech GmbH: 49.99 USD`);
    t.match(m!.text, 'Questions? Write to help@initech.example.');
    t.match(m!.html, '<img src="cid:seller-logo@meterline" alt="Initech GmbH"');
    t.same(
      m!.inline.map((p) => [p.cid, p.contentType, p.content.toString('base64')]),
      [['seller-logo@meterline', 'image/png', png]],
      'the logo travels inline with the HTML',
    );
    t.equal(m!.attachments.length, 1, 'the PDF is the one attachment');
    t.match(pdfOf(m!), /^INVOICE\nInitech GmbH\n/, 'the PDF prints the same seller');
    t.match(m!.headers['message-id'], /@initech\.example>$/);
  });
});
