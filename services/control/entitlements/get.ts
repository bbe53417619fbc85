import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { EntitlementSchema } from '../../../shared/api/entitlements.js';
import { getEntitlement } from '../../domain/entitlements/store.js';
import { toEntitlement } from './representation.js';
import { entitlementScope } from './scope.js';

/** GET /v1/entitlements/:entitlement_id — another customer's is 404, like an unknown id. */
export function getEntitlementRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/entitlements/:entitlement_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(
        toEntitlement(await getEntitlement(deps.pg, entitlementScope(ctx.principal!), ctx.params.entitlement_id!)),
      ),
    doc: {
      summary: 'Get an entitlement',
      tags: ['entitlements'],
      responses: { '200': { description: 'The entitlement', schema: EntitlementSchema } },
    },
  };
}
