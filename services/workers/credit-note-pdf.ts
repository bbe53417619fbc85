import type { CreditNoteDocument } from '../domain/documents/credit-note.js';
import { billToLines, renderPdfDocument } from './pdf-document.js';

/**
 * piscina task: renders one credit note as a PDF (the layout of services/workers/pdf-document.ts): the note's
 * facts (the invoice it credits, how it was settled), the reason, what it credits line by line and its total.
 */
/** The task is the credit note's document as the domain assembles it (services/domain/documents/credit-note.ts). */
export type CreditNotePdfTask = CreditNoteDocument;

const SETTLEMENT = {
  credit: 'Deducted from the amount due',
  refund: { pending: 'Refund in progress', succeeded: 'Refunded to the card charged', failed: 'Refund failed' },
} as const;

export default async function renderCreditNotePdf(task: CreditNotePdfTask): Promise<Uint8Array> {
  const { note } = task;
  return renderPdfDocument({
    title: 'CREDIT NOTE',
    name: `Credit note ${note.id}`,
    seller: task.seller,
    createdAt: note.created_at,
    facts: [
      ...(note.number ? ([['Credit note number', note.number]] as [string, string][]) : []),
      ['Credit note', note.id],
      ['Invoice', note.invoice_id],
      ['Issued', note.created_at.slice(0, 10)],
      ['Settled', note.type === 'credit' ? SETTLEMENT.credit : SETTLEMENT.refund[note.refund_status ?? 'pending']],
    ],
    billTo: billToLines(task.customer.name, `Customer ${note.customer_id}`, task.address),
    side: {
      heading: 'Credited invoice',
      text: note.invoice_id,
      detail: `Period ${task.invoice.period_start} to ${task.invoice.period_end}, invoiced ${task.invoice.amount} ${note.currency}`,
    },
    note: `Reason: ${note.reason}`,
    currency: note.currency,
    lines: task.lines.map((l) => ({
      description: l.description,
      detail: l.invoice_line === null ? '' : `Invoice line ${l.invoice_line + 1}`,
      quantity: l.quantity,
      unit_price: null,
      amount: l.amount,
    })),
    empty: 'No lines.',
    totals: [['Total credited', note.amount]],
  });
}
