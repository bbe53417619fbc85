import { createHash } from 'node:crypto';
import type { EmailKind } from './triggers.js';

/** What an email says about its document (the PDF it carries says the rest). */
export interface EmailDocument {
  kind: EmailKind;
  /** The invoice's number as printed, its amount (exact decimal text) and currency, the period it bills. */
  invoice: { id: string; number: string; amount: string; currency: string; period_start: string; period_end: string };
  /** Credit note emails: the note. */
  note?: { id: string; amount: string; type: 'credit' | 'refund' };
  /** The seller's name (SELLER_NAME), empty when unset. */
  seller: string;
  /** The invoice's hosted page (docs/payments.md "Hosted pages"); null or absent: none (revoked). */
  hosted_invoice_url?: string | null;
}

export interface ComposedEmail {
  subject: string;
  text: string;
  /** The attachment's file name, as the download routes name it. */
  filename: string;
}

/** Subject, body and attachment name of one email; plain text (the PDF is the document). */
export function composeEmail(d: EmailDocument): ComposedEmail {
  const from = d.seller ? ` from ${d.seller}` : '';
  const inv = d.invoice;
  const total = `${inv.amount} ${inv.currency}`;
  const period = `${inv.period_start} to ${inv.period_end}`;
  switch (d.kind) {
    case 'invoice':
      return {
        subject: `Invoice ${inv.number}${from}: ${total}`,
        text:
          `Your invoice ${inv.number}${from} for ${period} is attached: ${total}.\n` +
          (d.hosted_invoice_url ? `View and pay it online: ${d.hosted_invoice_url}\n` : ''),
        filename: `${inv.id}.pdf`,
      };
    case 'payment_failed':
      return {
        subject: `Payment failed for invoice ${inv.number}${from}`,
        text:
          `We could not collect the payment of invoice ${inv.number} (${total}, ${period}). ` +
          'It is attached; please check your payment method.\n',
        filename: `${inv.id}.pdf`,
      };
    case 'credit_note': {
      const n = d.note!;
      return {
        subject: `Credit note for invoice ${inv.number}${from}: ${n.amount} ${inv.currency}`,
        text:
          `A ${n.type === 'refund' ? 'refund' : 'credit'} of ${n.amount} ${inv.currency} on invoice ${inv.number} ` +
          `(${period}) is attached as credit note ${n.id}.\n`,
        filename: `${n.id}.pdf`,
      };
    }
  }
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
