import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CustomerSchema, UpdateCustomerBody } from '../../../shared/api/customers.js';
import type { CustomerChange } from '../../domain/customers/types.js';
import { toCustomer } from './representation.js';
import { parseCustomerChange } from './input.js';
import { updateCustomer } from '../../domain/customers/store.js';
import type { CustomerRegistryWriter } from '../../domain/customers/registry-writer.js';

/** PATCH /v1/customers/:customer_id (admin) — a new external_id is in force on every ingress once answered. */
export function updateCustomerRoute(deps: ApiDeps, registry: () => CustomerRegistryWriter): RouteDef<CustomerChange> {
  return {
    method: 'PATCH',
    path: '/v1/customers/:customer_id',
    auth: 'admin',
    input: parseCustomerChange,
    handler: async (ctx, change) =>
      reply.ok(toCustomer(await updateCustomer(deps.pg, registry(), ctx.params.customer_id!, change))),
    doc: {
      summary: 'Update a customer (name, external_id, email, billing_address, metadata; null clears)',
      tags: ['customers'],
      requestBody: UpdateCustomerBody,
      responses: { '200': { description: 'The updated customer', schema: CustomerSchema } },
    },
  };
}
