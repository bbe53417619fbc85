import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { CustomerListSchema, ListCustomersQuery } from '../../../shared/api/customers.js';
import { toCustomer } from './representation.js';
import { parseListCustomers, type CustomerListRequest } from './input.js';
import { listCustomers } from '../../domain/customers/store.js';

/** GET /v1/customers (admin) — every account of the deployment, newest first; `external_id` finds one. */
export function listCustomersRoute(deps: ApiDeps): RouteDef<CustomerListRequest> {
  return {
    method: 'GET',
    path: '/v1/customers',
    auth: 'admin',
    input: parseListCustomers,
    handler: async (_ctx, q) => {
      const { rows, total } = await listCustomers(deps.pg, { externalId: q.externalId }, pageWindow(q));
      return reply.page(rows.map(toCustomer), q, total);
    },
    doc: {
      summary: 'List customers (newest first; accounts made with the CLI have external_id null)',
      tags: ['customers'],
      query: ListCustomersQuery,
      responses: { '200': { description: 'A page of customers', schema: CustomerListSchema } },
    },
  };
}
