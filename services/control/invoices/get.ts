import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { InvoiceSchema } from '../../../shared/api/invoices.js';
import { toInvoice } from './representation.js';
import { getInvoice } from '../../domain/invoices/store.js';

/** GET /v1/billing/invoices/:invoice_id — 404 for another account's invoice. */
export function getInvoiceRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/:invoice_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(toInvoice(await getInvoice(deps.pg, ctx.principal!.accountId, ctx.params.invoice_id!))),
    doc: {
      summary: 'Get an invoice with its lines',
      tags: ['billing'],
      responses: { '200': { description: 'The invoice', schema: InvoiceSchema } },
    },
  };
}
