import { createHash } from 'node:crypto';
import { moneyText } from '../../../shared/money/amount-text.js';
import type { EmailKind } from './triggers.js';
import { renderHtml, safeHref, type HtmlEmail } from './html.js';

/** What an email says about its document (the PDF it carries says the rest). */
export interface EmailDocument {
  kind: EmailKind;
  /** The invoice's number as printed, its amount (exact decimal text) and currency, the period it bills. */
  invoice: { id: string; number: string; amount: string; currency: string; period_start: string; period_end: string };
  /** Credit note emails: the note (its number when it has one). */
  note?: { id: string; number?: string | null; amount: string; type: 'credit' | 'refund' };
  /** The seller (services/domain/seller/profile.ts): its name ('' when unset), where to write, whether a logo goes along. */
  seller: { name: string; support_email: string | null; logo: boolean };
  /** Payment-failed emails: what failed, as the invoice's last_payment_error says. */
  failure?: { code: string; message: string } | null;
  /** Links minted by the hosted pages (./links.ts); null: the email goes without. */
  links?: { invoice: string | null; update_payment_method: string | null };
  /** The customer is on a test clock: the subject and the first line say it is a test. */
  test?: boolean;
}

export interface ComposedEmail {
  subject: string;
  text: string;
  html: string;
  /** The attachment's file name, as the download routes name it. */
  filename: string;
}

const TEST_BANNER = 'Test email: this customer is on a test clock, so its dates are simulated.';

/** Subject, plain-text and HTML bodies and attachment name of one email: one content, two renderings. */
export function composeEmail(d: EmailDocument): ComposedEmail {
  const c = contentOf(d);
  const subject = `${d.test ? '[Test] ' : ''}${c.subject}`;
  return { subject, text: renderText(c), html: renderHtml(c), filename: c.filename };
}

interface Content extends HtmlEmail {
  subject: string;
  filename: string;
}

function contentOf(d: EmailDocument): Content {
  const from = d.seller.name ? ` from ${d.seller.name}` : '';
  const inv = d.invoice;
  const total = moneyText(inv.amount, inv.currency);
  const period = `${inv.period_start} to ${inv.period_end}`;
  const links = d.links ?? { invoice: null, update_payment_method: null };
  const base = {
    banner: d.test ? TEST_BANNER : null,
    logo: d.seller.logo,
    seller: d.seller.name,
    footer: [
      ...(d.seller.support_email ? [`Questions? Write to ${d.seller.support_email}.`] : []),
      ...(d.seller.name ? [d.seller.name] : []),
    ],
  };
  const facts: [string, string][] = [
    ['Invoice number', inv.number],
    ['Period', period],
    ['Amount', total],
  ];
  switch (d.kind) {
    case 'invoice':
      return {
        ...base,
        subject: `Invoice ${inv.number}${from}: ${total}`,
        heading: `Invoice ${inv.number}`,
        paragraphs: [`Your invoice ${inv.number}${from} for ${period} is attached: ${total}.`],
        facts,
        actions: [{ label: 'View and pay the invoice', url: links.invoice }],
        filename: `${inv.id}.pdf`,
      };
    case 'payment_failed': {
      const why = d.failure ? `${d.failure.message.replace(/\.$/, '')} (${d.failure.code}).` : null;
      const next = safeHref(links.update_payment_method)
        ? 'Please update your payment method; we will try again.'
        : 'Please check your payment method; we will try again.';
      return {
        ...base,
        subject: `Payment failed for invoice ${inv.number}${from}: ${total}`,
        heading: `Payment failed for invoice ${inv.number}`,
        paragraphs: [
          `We could not collect the payment of invoice ${inv.number} (${total}, ${period}).`,
          ...(why ? [`What failed: ${why}`] : []),
          `${next} The invoice is attached.`,
        ],
        facts,
        actions: [
          { label: 'Update payment method', url: links.update_payment_method },
          { label: 'View the invoice', url: links.invoice },
        ],
        filename: `${inv.id}.pdf`,
      };
    }
    case 'credit_note': {
      const n = d.note!;
      const amount = moneyText(n.amount, inv.currency);
      return {
        ...base,
        subject: `Credit note for invoice ${inv.number}${from}: ${amount}`,
        heading: `Credit note for invoice ${inv.number}`,
        paragraphs: [
          `A ${n.type === 'refund' ? 'refund' : 'credit'} of ${amount} on invoice ${inv.number} (${period}) is attached ` +
            `as credit note ${n.number ?? n.id}.`,
        ],
        facts: [
          ['Invoice number', inv.number],
          ['Credit note', n.number ?? n.id],
          [n.type === 'refund' ? 'Refund' : 'Credit', amount],
        ],
        actions: [{ label: 'View the invoice', url: links.invoice }],
        filename: `${n.id}.pdf`,
      };
    }
  }
}

/** The plain-text part: the same content, links written out after their labels. */
function renderText(c: Content): string {
  const lines: string[] = [];
  if (c.banner) lines.push(c.banner, '');
  lines.push(...c.paragraphs, '');
  for (const [k, v] of c.facts) lines.push(`${k}: ${v}`);
  const links = c.actions.filter((a) => safeHref(a.url));
  if (links.length) lines.push('', ...links.map((a) => `${a.label}: ${a.url}`));
  if (c.footer.length) lines.push('', '--', ...c.footer);
  return `${lines.join('\n')}\n`;
}

/**
 * The Message-ID of the email for (event, recipient): the same on every attempt, so a message sent again after a
 * crash between the SMTP server's acceptance and our mark (docs/emails.md) is recognisably the same message.
 */
export function emailMessageId(eventId: string, recipient: string, fromAddress: string): string {
  // MAIL_FROM is `a@b` or `Name <a@b>` (shared/config.ts checks it): the domain follows the last @.
  const at = fromAddress.lastIndexOf('@');
  const domain = at < 0 ? 'meterline' : fromAddress.slice(at + 1).replace(/>$/, '');
  const who = createHash('sha256').update(recipient.toLowerCase()).digest('hex').slice(0, 16);
  return `<${eventId}.${who}@${domain}>`;
}
