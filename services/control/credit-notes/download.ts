import type { Piscina } from 'piscina';
import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { runPooled } from '../../workers/pool.js';
import type { CreditNotePdfTask } from '../../workers/credit-note-pdf.js';
import { pdfResponses } from '../invoices/download.js';
import { creditNoteDocument } from '../../domain/documents/credit-note.js';
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
      const task = await creditNoteDocument(
        deps,
        await accountActingOn(deps.pg, ctx.principal!, 'credit_note', id),
        id,
      );
      return reply.pdf(await runPooled(pool(), task, 'credit note PDF'), task.note.id);
    },
    doc: {
      summary: 'Download a credit note as a PDF (Content-Disposition: attachment; filename="<id>.pdf")',
      tags: ['billing'],
      responses: pdfResponses('The credit note'),
    },
  };
}
