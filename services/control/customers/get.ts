import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
import { CustomerSchema } from '../../../shared/api/customers.js';
import { toCustomer } from './representation.js';
import { getCustomer } from '../../domain/customers/store.js';

/** GET /v1/customers/:customer_id (admin) */
export function getCustomerRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/customers/:customer_id',
    auth: 'admin',
    handler: (ctx) => {
      const id = ctx.params.customer_id!;
      return okFromCache(deps.reads.of('customers'), id, async () => toCustomer(await getCustomer(deps.pg, id)));
    },
    doc: {
      summary: 'Get a customer',
      tags: ['customers'],
      responses: { '200': { description: 'The customer', schema: CustomerSchema } },
    },
  };
}
