import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ValidationError } from '../../../shared/errors.js';
import { CreateEntitlementBody, EntitlementSchema } from '../../../shared/api/entitlements.js';
import { findAccountOfCustomer } from '../../domain/customers/store.js';
import { insertEntitlement } from '../../domain/entitlements/store.js';
import { parseNewEntitlement, type EntitlementInput } from './input.js';
import { toEntitlement } from './representation.js';

/** POST /v1/entitlements — an operator (admin) entitles a customer to a feature; one per (customer, feature). */
export function createEntitlementRoute(deps: ApiDeps): RouteDef<EntitlementInput> {
  return {
    method: 'POST',
    path: '/v1/entitlements',
    auth: 'admin',
    input: parseNewEntitlement,
    handler: async (_ctx, input) => {
      const accountId = await findAccountOfCustomer(deps.pg, input.customerId);
      if (!accountId) throw new ValidationError([{ field: 'customer_id', message: 'no such customer' }]);
      const { customerId: _, ...rest } = input;
      const row = await insertEntitlement(deps.pg, { ...rest, accountId });
      return reply.created(toEntitlement(row), `/v1/entitlements/${row.id}`);
    },
    doc: {
      summary: 'Entitle a customer to a feature: metered (a limit of a meter’s usage per period) or boolean',
      tags: ['entitlements'],
      requestBody: CreateEntitlementBody,
      responses: {
        '201': {
          description: 'The entitlement (Location names it); 409 conflict when the customer has one to the feature',
          schema: EntitlementSchema,
        },
      },
    },
  };
}
