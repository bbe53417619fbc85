import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CustomerSchema } from '../../../shared/api/customers.js';
import { toCustomer } from './representation.js';
import { getCustomer } from '../../domain/customers/store.js';

/** GET /v1/customers/:customer_id (admin) */
export function getCustomerRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/customers/:customer_id',
    auth: 'admin',
    handler: async (ctx) => reply.ok(toCustomer(await getCustomer(deps.pg, ctx.params.customer_id!))),
    doc: {
      summary: 'Get a customer',
      tags: ['customers'],
      responses: { '200': { description: 'The customer', schema: CustomerSchema } },
    },
  };
}
