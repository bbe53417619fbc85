import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { InvoiceListSchema, ListInvoicesQuery } from '../../../shared/api/invoices.js';
import { invoiceResources } from './representation.js';
import { parseListInvoices } from './input.js';
import { listInvoices } from '../../domain/invoices/store.js';
import { accountsListedFor } from '../../domain/customers/acting-for.js';

/**
 * GET /v1/billing/invoices?page&per_page&status&customer_id&scope&period_from&period_to — the caller's invoices (an
 * operator's: a customer's, or with scope=deployment every customer's) with their lines, newest first.
 */
export function listInvoicesRoute(deps: ApiDeps): RouteDef<ListInvoicesQuery> {
  return {
    method: 'GET',
    path: '/v1/billing/invoices',
    auth: 'read',
    input: parseListInvoices,
    handler: async (ctx, q) => {
      const accountId = await accountsListedFor(deps.pg, ctx.principal!, q);
      const { items, total } = await listInvoices(deps.pg, accountId, q, pageWindow(q));
      return reply.page(await invoiceResources(deps, items), q, total);
    },
    doc: {
      summary: 'List invoices (newest first), optionally of one status, customer or period',
      tags: ['billing'],
      query: ListInvoicesQuery,
      responses: { '200': { description: 'A page of invoices', schema: InvoiceListSchema } },
    },
  };
}
