import t from 'tap';
import { composeEmail, emailMessageId } from '../../services/domain/emails/message.js';
import { EMAIL_TRIGGERS, emailKindOf } from '../../services/domain/emails/triggers.js';
import { ConfigError, parseConfig } from '../../shared/config.js';
import { parseMessage } from '../fixtures/mailbox.js';

/** Invoice emails (docs/emails.md): which events send which email, what it says, its Message-ID, the settings. */
const invoice = {
  id: 'inv_1',
  number: '000042',
  amount: '49.99',
  currency: 'USD',
  period_start: '2026-10-01',
  period_end: '2026-10-31',
};

t.test('the issued invoice, a failed payment and a credit note send an email; other events none', async (t) => {
  t.same(EMAIL_TRIGGERS, {
    'invoice.created': 'invoice',
    'payment.failed': 'payment_failed',
    'credit_note.created': 'credit_note',
  });
  t.equal(emailKindOf('invoice.paid'), null);
  t.equal(emailKindOf('meter.usage.recorded'), null);
  t.equal(emailKindOf('not.an.event'), null);
});

const seller = { name: 'Acme Ltd', support_email: 'help@acme.example', logo: false };

t.test('subject, text, HTML and attachment name of each email', async (t) => {
  const mail = composeEmail({ kind: 'invoice', invoice, seller });
  t.equal(mail.subject, 'Invoice 000042 from Acme Ltd: 49.99 USD');
  t.equal(
    mail.text,
    'Your invoice 000042 from Acme Ltd for 2026-10-01 to 2026-10-31 is attached: 49.99 USD.\n\n' +
      'Invoice number: 000042\nPeriod: 2026-10-01 to 2026-10-31\nAmount: 49.99 USD\n\n' +
      '--\nQuestions? Write to help@acme.example.\nAcme Ltd\n',
  );
  t.equal(mail.filename, 'inv_1.pdf');
  t.match(mail.html, /^<!doctype html>/);
  t.match(mail.html, 'Your invoice 000042 from Acme Ltd for 2026-10-01 to 2026-10-31 is attached: 49.99 USD.');
  t.notMatch(mail.html, '<a ', 'no link when the invoice has no hosted page');
  t.equal(
    composeEmail({ kind: 'invoice', invoice, seller: { ...seller, name: '' } }).subject,
    'Invoice 000042: 49.99 USD',
    'no seller',
  );
  const failed = composeEmail({
    kind: 'payment_failed',
    invoice,
    seller,
    failure: { code: 'insufficient_funds', message: 'The card has insufficient funds.' },
  });
  t.equal(failed.subject, 'Payment failed for invoice 000042 from Acme Ltd: 49.99 USD');
  t.match(failed.text, 'What failed: Your card has insufficient funds (insufficient_funds).');
  t.match(
    composeEmail({
      kind: 'payment_failed',
      invoice,
      seller,
      failure: { code: 'card_declined', message: 'The card was declined.', decline_code: 'expired_card' },
    }).text,
    'What failed: Your card has expired (card_declined).',
    'the decline code chooses the text when there is one',
  );
  t.match(
    composeEmail({
      kind: 'payment_failed',
      invoice,
      seller,
      locale: 'de',
      failure: { code: 'lost_card', message: 'The card was declined.' },
    }).text,
    'Grund: Die Zahlung wurde abgelehnt (lost_card).',
    "a code with no text of its own: the generic refusal, in the customer's language",
  );
  t.match(failed.text, 'Please check your payment method; we will try again. The invoice is attached.');
  const note = composeEmail({
    kind: 'credit_note',
    invoice,
    note: { id: 'cn_1', number: '000043', amount: '10.5', type: 'refund' },
    seller,
  });
  t.equal(note.subject, 'Credit note for invoice 000042 from Acme Ltd: 10.50 USD');
  t.match(
    note.text,
    'A refund of 10.50 USD on invoice 000042 (2026-10-01 to 2026-10-31) is attached as credit note 000043.',
  );
  t.equal(note.filename, 'cn_1.pdf');
});

t.test('amounts are the money module’s everywhere: every minor unit, grouped, subjects included', async (t) => {
  const subject = (amount: string, currency: string) =>
    composeEmail({ kind: 'invoice', invoice: { ...invoice, amount, currency }, seller }).subject;
  t.equal(subject('69', 'USD'), 'Invoice 000042 from Acme Ltd: 69.00 USD', 'not "69 USD" beside "69.01 USD"');
  t.equal(subject('69.01', 'USD'), 'Invoice 000042 from Acme Ltd: 69.01 USD');
  t.equal(subject('1234567.5', 'EUR'), 'Invoice 000042 from Acme Ltd: 1,234,567.50 EUR');
  t.equal(subject('500', 'JPY'), 'Invoice 000042 from Acme Ltd: 500 JPY', 'a currency without minor units');
  t.equal(subject('1.5', 'KWD'), 'Invoice 000042 from Acme Ltd: 1.500 KWD', 'three minor units');
});

t.test('links: the hosted invoice page and the card update, http(s) only, in both parts', async (t) => {
  const links = {
    invoice: 'https://pay.acme.example/i/tok_1?a=1&b=2',
    update_payment_method: 'https://pay.acme.example/card/tok_2',
  };
  const mail = composeEmail({ kind: 'invoice', invoice, seller, links });
  t.match(mail.text, 'View and pay the invoice: https://pay.acme.example/i/tok_1?a=1&b=2');
  t.match(mail.html, 'href="https://pay.acme.example/i/tok_1?a=1&#38;b=2"', 'escaped in the attribute');
  const failed = composeEmail({ kind: 'payment_failed', invoice, seller, links });
  t.match(failed.text, 'Please update your payment method; we will try again.');
  t.match(failed.text, 'Update payment method: https://pay.acme.example/card/tok_2');
  t.match(failed.html, 'href="https://pay.acme.example/card/tok_2"');
  const hostile = composeEmail({
    kind: 'payment_failed',
    invoice,
    seller,
    links: { invoice: 'javascript:alert(1)', update_payment_method: 'data:text/html,x' },
  });
  t.notMatch(hostile.html, /javascript:|data:text|<a /, 'no link but http(s)');
  t.notMatch(hostile.text, /javascript:|data:text/);
});

t.test('every value is text in the HTML part, never markup', async (t) => {
  const mail = composeEmail({
    kind: 'invoice',
    invoice: { ...invoice, number: '<b>42</b>' },
    seller: { name: 'Evil "Co" <script>alert(1)</script> & Sons', support_email: null, logo: false },
  });
  t.notMatch(mail.html, /<script|<b>42/);
  t.match(mail.html, 'Evil &#34;Co&#34; &#60;script&#62;alert(1)&#60;/script&#62; &#38; Sons');
  t.match(mail.html, '&#60;b&#62;42&#60;/b&#62;');
});

t.test('a test clock’s customer: [Test] in the subject, the note first in both parts', async (t) => {
  const mail = composeEmail({ kind: 'invoice', invoice, seller, test: true });
  t.equal(mail.subject, '[Test] Invoice 000042 from Acme Ltd: 49.99 USD');
  t.match(mail.text, /^Test email: this customer is on a test clock/);
  t.match(mail.html, 'Test email: this customer is on a test clock');
  t.notMatch(composeEmail({ kind: 'invoice', invoice, seller }).text, 'Test email');
});

t.test('the seller’s logo: an inline image of the HTML part, its name otherwise', async (t) => {
  const withLogo = composeEmail({ kind: 'invoice', invoice, seller: { ...seller, logo: true } });
  t.match(withLogo.html, '<img src="cid:seller-logo@meterline" alt="Acme Ltd"');
  t.notMatch(composeEmail({ kind: 'invoice', invoice, seller }).html, '<img');
});

t.test('the Message-ID is the same for an (event, recipient) on every attempt, and differs otherwise', async (t) => {
  const a = emailMessageId('evt_1', 'ap@customer.example', 'Acme Billing <billing@acme.example>');
  t.match(a, /^<evt_1\.[0-9a-f]{16}@acme\.example>$/);
  t.equal(emailMessageId('evt_1', 'AP@customer.example', 'billing@acme.example'), a, 'case of the address aside');
  t.not(emailMessageId('evt_1', 'other@customer.example', 'billing@acme.example'), a);
  t.not(emailMessageId('evt_2', 'ap@customer.example', 'billing@acme.example'), a);
});

t.test('SMTP_URL and MAIL_FROM', async (t) => {
  const base = {
    DATABASE_URL: 'postgres://u@127.0.0.1:55432/db',
    NATS_URL: 'nats://127.0.0.1:54222',
    CLICKHOUSE_URL: 'http://127.0.0.1:58123',
    SECRET_KEY: 'ab'.repeat(32),
  };
  const c = parseConfig(base);
  t.equal(c.SMTP_URL, '', 'emails off by default');
  t.equal(c.MAIL_FROM, 'billing@localhost');
  t.equal(parseConfig({ ...base, SMTP_URL: 'smtps://u:p@mail.example:465' }).SMTP_URL, 'smtps://u:p@mail.example:465');
  t.equal(parseConfig({ ...base, MAIL_FROM: 'Acme <b@acme.example>' }).MAIL_FROM, 'Acme <b@acme.example>');
  for (const [variable, value] of [
    ['SMTP_URL', 'http://mail.example'],
    ['SMTP_URL', 'not a url'],
    ['MAIL_FROM', 'billing'],
    ['MAIL_FROM', 'Acme <b@acme.example'],
    ['MAIL_FROM', 'a@b.example\nBcc: x@y.example'],
  ]) {
    const err = t.throws(() => parseConfig({ ...base, [variable!]: value })) as unknown;
    t.ok(err instanceof ConfigError && err.problems.some((p) => p.variable === variable), `${variable}=${value}`);
  }
});

t.test('the test mailbox reads a multipart message with a base64 PDF attachment', async (t) => {
  const pdf = Buffer.from('%PDF-1.3\n%%EOF\n');
  const raw = [
    'X-RcptTo: ap@customer.example',
    'To: ap@customer.example',
    'Subject: Invoice 000042:',
    ' 49.99 USD',
    'Content-Type: multipart/mixed; boundary="--b"',
    '',
    '----b',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    'Hello',
    '----b',
    'Content-Type: application/pdf; name=inv_1.pdf',
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: attachment; filename=inv_1.pdf',
    '',
    pdf.toString('base64'),
    '----b--',
    '',
  ].join('\r\n');
  const m = parseMessage(Buffer.from(raw));
  t.equal(m.rcptTo, 'ap@customer.example');
  t.equal(m.headers.subject, 'Invoice 000042: 49.99 USD', 'folded header unfolded');
  t.equal(m.text.trim(), 'Hello');
  t.same(
    m.attachments.map((a) => [a.filename, a.contentType, a.content.toString('latin1')]),
    [['inv_1.pdf', 'application/pdf', pdf.toString('latin1')]],
  );
});
