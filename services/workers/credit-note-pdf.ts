import type { CreditNoteDocument } from '../domain/documents/credit-note.js';
import { CREDIT_NOTE_LABELS } from '../domain/credit-notes/credit-note-texts.js';
import { invoiceTexts } from '../domain/invoices/invoice-texts.js';
import { billToLines, printable, renderPdfDocument } from './pdf-document.js';

/**
 * piscina task: renders one credit note as a PDF (the layout of services/workers/pdf-document.ts): the note's
 * facts (the invoice it credits, how it was settled), the reason, what it credits line by line and its total — in
 * the customer's locale (the texts of services/domain/credit-notes/credit-note-texts.ts and the invoice's formats).
 */
/** The task is the credit note's document as the domain assembles it (services/domain/documents/credit-note.ts). */
export type CreditNotePdfTask = CreditNoteDocument;

export default async function renderCreditNotePdf(task: CreditNotePdfTask): Promise<Uint8Array> {
  const { note } = task;
  const t = invoiceTexts(task.locale);
  const l = t.labels;
  const c = CREDIT_NOTE_LABELS[t.locale];
  const settled = note.type === 'credit' ? c.settlement.credit : c.settlement.refund[note.refund_status ?? 'pending'];
  const period = l.range(t.date(task.invoice.period_start), t.date(task.invoice.period_end));
  return renderPdfDocument({
    title: l.creditNoteTitle,
    texts: t,
    name: `Credit note ${note.id}`,
    seller: task.seller,
    createdAt: note.created_at,
    facts: [
      ...(note.number ? ([[l.creditNoteNumber, printable(note.number)]] as [string, string][]) : []),
      [c.creditNote, note.id],
      [c.invoice, note.invoice_id],
      [l.issued, t.date(note.created_at)],
      [c.settled, settled],
    ],
    billTo: billToLines(task.customer.name, c.customer(note.customer_id), task.address, l.noAddress),
    side: {
      heading: c.creditedInvoice,
      text: note.invoice_id,
      detail: c.periodInvoiced(period, t.money(task.invoice.amount, note.currency)),
    },
    note: c.reason(note.reason),
    currency: note.currency,
    lines: task.lines.map((line) => ({
      description: line.description,
      detail: line.invoice_line === null ? '' : c.invoiceLine(line.invoice_line + 1),
      quantity: line.quantity,
      unit_price: null,
      amount: line.amount,
    })),
    empty: c.noLines,
    totals: [[c.totalCredited, note.amount]],
  });
}
