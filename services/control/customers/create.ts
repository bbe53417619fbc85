import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateCustomerBody, CustomerSchema } from '../../../shared/api/customers.js';
import type { NewCustomer } from '../../domain/customers/types.js';
import { toCustomer } from './representation.js';
import { parseNewCustomer } from './input.js';
import { insertCustomer } from '../../domain/customers/store.js';
import type { CustomerRegistryWriter } from '../../domain/customers/registry-writer.js';

/** POST /v1/customers (admin) — 201 + Location once Postgres and the customer registry both hold it. */
export function createCustomerRoute(deps: ApiDeps, registry: () => CustomerRegistryWriter): RouteDef<NewCustomer> {
  return {
    method: 'POST',
    path: '/v1/customers',
    auth: 'admin',
    input: parseNewCustomer,
    handler: async (_ctx, customer) => {
      const row = await insertCustomer(deps.pg, registry(), customer);
      return reply.created(toCustomer(row), `/v1/customers/${row.customer_id}`);
    },
    doc: {
      summary: 'Create a customer (an account of the deployment, named by the operator’s external_id)',
      tags: ['customers'],
      requestBody: CreateCustomerBody,
      responses: {
        '201': { description: 'The customer, usable by every ingress (Location names it)', schema: CustomerSchema },
      },
    },
  };
}
