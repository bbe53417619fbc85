import type { Piscina } from 'piscina';
import type { Infra } from '../../../shared/infra.js';
import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { runPooled } from '../../workers/pool.js';
import type { CreditNotePdfTask } from '../../workers/credit-note-pdf.js';
import { getBillingInfo } from '../../domain/billing-info/store.js';
import { accountName, getInvoice } from '../../domain/invoices/store.js';
import { pdfResponses, sellerOf } from '../invoices/download.js';
import { getCreditNote } from '../../domain/credit-notes/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

export type CreditNotePdfPool = Piscina<CreditNotePdfTask, Uint8Array>;

/**
 * GET /v1/billing/credit-notes/:credit_note_id/download — the credit note as a PDF (the credited invoice, reason,
 * lines, total), rendered in a piscina worker like the invoice's (services/control/invoices/download.ts).
 */
export function downloadCreditNoteRoute(deps: ApiDeps, pool: () => CreditNotePdfPool): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/credit-notes/:credit_note_id/download',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.credit_note_id!;
      const task = await creditNotePdfTask(deps, await accountActingOn(deps.pg, ctx.principal!, 'credit_note', id), id);
      return reply.pdf(await runPooled(pool(), task, 'credit note PDF'), task.note.id);
    },
    doc: {
      summary: 'Download a credit note as a PDF (Content-Disposition: attachment; filename="<id>.pdf")',
      tags: ['billing'],
      responses: pdfResponses('The credit note'),
    },
  };
}

/** What the credit note PDF shows (the download route and the credit note emails render the same). */
export async function creditNotePdfTask(
  { pg, config }: Pick<Infra, 'pg' | 'config'>,
  accountId: string,
  creditNoteId: string,
): Promise<CreditNotePdfTask> {
  const { note, lines } = await getCreditNote(pg, accountId, creditNoteId);
  const [{ invoice }, billing, name, seller] = await Promise.all([
    getInvoice(pg, accountId, note.invoice_id),
    getBillingInfo(pg, accountId),
    accountName(pg, accountId),
    sellerOf({ pg, config }, accountId),
  ]);
  const task: CreditNotePdfTask = {
    note: { ...note, created_at: note.created_at.toISOString() },
    invoice: { amount: invoice.amount, period_start: invoice.period_start, period_end: invoice.period_end },
    lines: lines.map((l) => ({
      description: l.description,
      invoice_line: l.invoice_position,
      quantity: l.quantity,
      amount: l.amount,
    })),
    customer: { name },
    address: billing.billing_address,
    seller,
  };
  return task;
}
