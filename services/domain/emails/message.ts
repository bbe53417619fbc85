import { createHash } from 'node:crypto';
import { invoiceTexts, type InvoiceTexts } from '../invoices/invoice-texts.js';
import { declineText } from '../payments/decline-texts.js';
import { EMAIL_LABELS, type EmailLabels } from './email-texts.js';
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
  failure?: { code: string; message: string; decline_code?: string } | null;
  /** Links minted by the hosted pages (./links.ts); null: the email goes without. */
  links?: { invoice: string | null; update_payment_method: string | null };
  /** The customer is on a test clock: the subject and the first line say it is a test. */
  test?: boolean;
  /** The customer's locale (services/domain/invoices/invoice-texts.ts): the texts' language, amounts, dates; default en. */
  locale?: string | null;
}

export interface ComposedEmail {
  subject: string;
  text: string;
  html: string;
  /** The attachment's file name, as the download routes name it. */
  filename: string;
}

/** Subject, plain-text and HTML bodies and attachment name of one email: one content, two renderings. */
export function composeEmail(d: EmailDocument): ComposedEmail {
  const t = invoiceTexts(d.locale);
  const c = contentOf(d, t, EMAIL_LABELS[t.locale]);
  const subject = `${d.test ? EMAIL_LABELS[t.locale].testSubject : ''}${c.subject}`;
  return { subject, text: renderText(c), html: renderHtml(c, t.locale), filename: c.filename };
}

interface Content extends HtmlEmail {
  subject: string;
  filename: string;
}

/** The email's texts in the customer's language, its amounts and dates formatted for it (invoice-texts.ts). */
function contentOf(d: EmailDocument, t: InvoiceTexts, l: EmailLabels): Content {
  const seller = d.seller.name;
  const inv = d.invoice;
  const total = t.money(inv.amount, inv.currency);
  const period = l.range(t.date(inv.period_start), t.date(inv.period_end));
  const links = d.links ?? { invoice: null, update_payment_method: null };
  const base = {
    banner: d.test ? l.testBanner : null,
    logo: d.seller.logo,
    seller,
    footer: [...(d.seller.support_email ? [l.questions(d.seller.support_email)] : []), ...(seller ? [seller] : [])],
  };
  const facts: [string, string][] = [
    [l.invoiceNumber, inv.number],
    [l.period, period],
    [l.amount, total],
  ];
  switch (d.kind) {
    case 'invoice':
      return {
        ...base,
        subject: l.invoiceSubject(inv.number, seller, total),
        heading: l.invoiceHeading(inv.number),
        paragraphs: [l.invoiceBody(inv.number, seller, period, total)],
        facts,
        actions: [{ label: l.viewAndPay, url: links.invoice }],
        filename: `${inv.id}.pdf`,
      };
    case 'payment_failed': {
      // The refusal in the customer's language, as the hosted pages tell it, with the processor's code beside it.
      const why = d.failure
        ? `${declineText(t.locale, d.failure.decline_code, d.failure.code).replace(/\.$/, '')} (${d.failure.code}).`
        : null;
      const next = safeHref(links.update_payment_method) ? l.updateAndRetry : l.checkAndRetry;
      return {
        ...base,
        subject: l.failedSubject(inv.number, seller, total),
        heading: l.failedHeading(inv.number),
        paragraphs: [
          l.failedBody(inv.number, total, period),
          ...(why ? [l.whatFailed(why)] : []),
          `${next} ${l.attached}`,
        ],
        facts,
        actions: [
          { label: l.updatePaymentMethod, url: links.update_payment_method },
          { label: l.viewInvoice, url: links.invoice },
        ],
        filename: `${inv.id}.pdf`,
      };
    }
    case 'credit_note': {
      const n = d.note!;
      const amount = t.money(n.amount, inv.currency);
      return {
        ...base,
        subject: l.noteSubject(inv.number, seller, amount),
        heading: l.noteHeading(inv.number),
        paragraphs: [l.noteBody[n.type](amount, inv.number, period, n.number ?? n.id)],
        facts: [
          [l.invoiceNumber, inv.number],
          [l.creditNote, n.number ?? n.id],
          [n.type === 'refund' ? l.refund : l.credit, amount],
        ],
        actions: [{ label: l.viewInvoice, url: links.invoice }],
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
