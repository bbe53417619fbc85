import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { InvoiceSchema } from '../../../shared/api/invoices.js';
import { invoiceResource } from './representation.js';
import { getInvoiceById, voidInvoice } from '../../domain/invoices/store.js';

/**
 * POST /v1/billing/invoices/:invoice_id/void — an operator (admin scope) voids an unpaid invoice: nothing is
 * charged for it afterwards. Idempotent: voiding a void invoice answers 200 with it again (one invoice.voided event).
 */
export function voidInvoiceRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/billing/invoices/:invoice_id/void',
    auth: 'admin',
    handler: async (ctx) => {
      await voidInvoice(deps.pg, ctx.params.invoice_id!, new Date());
      return reply.ok(await invoiceResource(deps, await getInvoiceById(deps.pg, ctx.params.invoice_id!)));
    },
    doc: {
      summary: 'Void an open or uncollectible invoice (operators only): no payment is attempted for it afterwards',
      tags: ['billing'],
      responses: {
        '200': { description: 'The invoice, void (also when it already was)', schema: InvoiceSchema },
        '409': problemResponse(
          'invoice_paid (refund with a credit note instead), invoice_credited (it has credit notes), invoice_payment_pending (a payment attempt is in flight: retry), invoice_draft (finalize it first)',
        ),
      },
    },
  };
}
