import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { runPooled } from '../../workers/pool.js';
import { pdfResponses, type InvoicePdfPool } from '../invoices/download.js';
import { invoiceDocument } from '../../domain/documents/invoice.js';
import { openInvoice, refusedLinkPage } from './access.js';

/** GET /hosted/invoices/:invoice_id/:token/pdf — the invoice's PDF through its hosted link (the same document). */
export function hostedInvoicePdfRoute(deps: ApiDeps, pool: () => InvoicePdfPool): RouteDef {
  return {
    method: 'GET',
    path: '/hosted/invoices/:invoice_id/:token/pdf',
    auth: 'public',
    handler: async (ctx) => {
      const opened = await openInvoice(deps, ctx);
      if (opened.state !== 'ok') return refusedLinkPage(deps, ctx, opened);
      const task = await invoiceDocument(deps, opened.accountId, opened.invoice.invoice.id);
      const pdf = reply.pdf(await runPooled(pool(), task, 'invoice PDF'), task.invoice.number ?? task.invoice.id);
      return { ...pdf, headers: { ...pdf.headers, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' } };
    },
    doc: {
      summary: "The invoice's PDF through its hosted link (no sign-in); 404 / 410 as the page",
      tags: ['hosted pages'],
      responses: pdfResponses('The invoice'),
    },
  };
}
