import type { EventType } from '../../../shared/vocabulary.js';

/** What an email is about: the issued invoice, a failed payment of it, or a credit note on it. */
export type EmailKind = 'invoice' | 'payment_failed' | 'credit_note';

/**
 * The events that send the customer an email, and which email (docs/emails.md). The one place to change when a
 * distinct finalize step lands: `invoice.created` is emitted when the period close issues an invoice today; an
 * `invoice.finalized` event would take its place here.
 */
export const EMAIL_TRIGGERS: Readonly<Partial<Record<EventType, EmailKind>>> = {
  'invoice.created': 'invoice',
  'payment.failed': 'payment_failed',
  'credit_note.created': 'credit_note',
};

/** The email an event asks for, or null (most events send none). */
export function emailKindOf(type: string): EmailKind | null {
  return EMAIL_TRIGGERS[type as EventType] ?? null;
}
