import type { Piscina } from 'piscina';
import type { ApiDeps, OperationDoc, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { runPooled } from '../../workers/pool.js';
import type { InvoicePdfTask } from '../../workers/invoice-pdf.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';
import { invoiceDocument } from '../../domain/documents/invoice.js';

export type InvoicePdfPool = Piscina<InvoicePdfTask, Uint8Array>;

/**
 * GET /v1/billing/invoices/:invoice_id/download — the invoice as a PDF (customer, billing address, period,
 * lines, total), rendered in a piscina worker. The address is the account's current one. The caller's own, or
 * (admin) any customer's; else 404.
 */
export function downloadInvoiceRoute(deps: ApiDeps, pool: () => InvoicePdfPool): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/:invoice_id/download',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.invoice_id!;
      const task = await invoiceDocument(deps, await accountActingOn(deps.pg, ctx.principal!, 'invoice', id), id);
      return reply.pdf(await runPooled(pool(), task, 'invoice PDF'), task.invoice.id);
    },
    doc: {
      summary: 'Download an invoice as a PDF (Content-Disposition: attachment; filename="<id>.pdf")',
      tags: ['billing'],
      responses: pdfResponses('The invoice'),
    },
  };
}

/** The OpenAPI answers of a PDF download route (invoices, credit notes). */
export function pdfResponses(what: string): NonNullable<OperationDoc['responses']> {
  return {
    '200': {
      description: `${what} as a PDF document`,
      schema: { type: 'string', contentMediaType: 'application/pdf' },
      contentType: 'application/pdf',
    },
    '503': problemResponse('Too many PDFs are being rendered at once (unavailable); retry after Retry-After seconds'),
  };
}
