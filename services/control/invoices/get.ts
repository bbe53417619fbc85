import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { InvoiceSchema } from '../../../shared/api/invoices.js';
import { invoiceResource } from './representation.js';
import { getInvoice } from '../../domain/invoices/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/invoices/:invoice_id — the caller's own, or (admin) any customer's; else 404. */
export function getInvoiceRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/:invoice_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.invoice_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'invoice', id);
      return reply.ok(await invoiceResource(deps, await getInvoice(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Get an invoice with its lines',
      tags: ['billing'],
      responses: { '200': { description: 'The invoice', schema: InvoiceSchema } },
    },
  };
}
