import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { pageOf } from '../../../shared/http/pagination.js';
import { jsonReply } from '../../../shared/money/json.js';
import { InvoiceListSchema, ListInvoicesQuery, toInvoice } from './schemas.js';
import { listInvoices } from './store.js';

const query = queryValidator<ListInvoicesQuery>(ListInvoicesQuery);

/** GET /v1/billing/invoices?page&per_page&status — the caller's invoices with their lines, newest first. */
export function listInvoicesRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const { items, total } = await listInvoices(deps.pg, ctx.principal!.accountId, q);
      return jsonReply(200, pageOf(items.map(toInvoice), q.page, q.per_page, total));
    },
    doc: {
      summary: 'List invoices (newest first), optionally of one status',
      tags: ['billing'],
      query: ListInvoicesQuery,
      responses: { '200': { description: 'A page of invoices', schema: InvoiceListSchema } },
    },
  };
}
