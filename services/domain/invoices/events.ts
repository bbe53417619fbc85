import { JsonDecimal } from '../../../shared/money/json.js';
import type { InvoiceStatus } from '../../../shared/vocabulary.js';
import type { NewEventOf } from '../events/outbox-store.js';

/** What every invoice event says of its invoice (shared/api/events.ts). */
export interface InvoiceFacts {
  id: string;
  account_id: string;
  amount: string;
  currency: string;
}

const invoiceData = (inv: InvoiceFacts) => ({
  invoice_id: inv.id,
  amount: new JsonDecimal(inv.amount),
  currency: inv.currency,
});

/** `invoice.created`: the invoice was issued (finalized and numbered). */
export function invoiceCreated(inv: InvoiceFacts, hostedUrl?: string): NewEventOf<'invoice.created'> {
  const data = invoiceData(inv);
  return {
    accountId: inv.account_id,
    type: 'invoice.created',
    data: hostedUrl === undefined ? data : { ...data, hosted_invoice_url: hostedUrl },
  };
}

/** `invoice.paid`, with the status it had (draft: issued with nothing to charge, it was never open). */
export function invoicePaid(inv: InvoiceFacts, was: InvoiceStatus): NewEventOf<'invoice.paid'> {
  return {
    accountId: inv.account_id,
    type: 'invoice.paid',
    data: { ...invoiceData(inv), status: 'paid', previous_attributes: { status: was } },
  };
}

/** `invoice.voided`, with the status it had. */
export function invoiceVoided(inv: InvoiceFacts, was: InvoiceStatus): NewEventOf<'invoice.voided'> {
  return {
    accountId: inv.account_id,
    type: 'invoice.voided',
    data: { ...invoiceData(inv), status: 'void', previous_attributes: { status: was } },
  };
}

/** The events of an invoice being issued: invoice.created, and invoice.paid when nothing is to charge. */
export function issuedEvents(
  inv: InvoiceFacts,
  status: 'open' | 'paid',
  hostedUrl?: string,
): (NewEventOf<'invoice.created'> | NewEventOf<'invoice.paid'>)[] {
  const created = invoiceCreated(inv, hostedUrl);
  return status === 'paid' ? [created, invoicePaid(inv, 'draft')] : [created];
}
