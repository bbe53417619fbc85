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

t.test('subject, text and attachment name of each email', async (t) => {
  t.same(composeEmail({ kind: 'invoice', invoice, seller: 'Acme Ltd' }), {
    subject: 'Invoice 000042 from Acme Ltd: 49.99 USD',
    text: 'Your invoice 000042 from Acme Ltd for 2026-10-01 to 2026-10-31 is attached: 49.99 USD.\n',
    filename: 'inv_1.pdf',
  });
  t.equal(composeEmail({ kind: 'invoice', invoice, seller: '' }).subject, 'Invoice 000042: 49.99 USD', 'no seller');
  t.equal(
    composeEmail({ kind: 'payment_failed', invoice, seller: 'Acme Ltd' }).subject,
    'Payment failed for invoice 000042 from Acme Ltd',
  );
  const note = composeEmail({
    kind: 'credit_note',
    invoice,
    note: { id: 'cn_1', amount: '10.5', type: 'refund' },
    seller: 'Acme Ltd',
  });
  t.equal(note.subject, 'Credit note for invoice 000042 from Acme Ltd: 10.5 USD');
  t.match(note.text, 'A refund of 10.5 USD on invoice 000042');
  t.equal(note.filename, 'cn_1.pdf');
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
