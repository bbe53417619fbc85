import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { deleteEntitlement } from '../../domain/entitlements/store.js';

/** DELETE /v1/entitlements/:entitlement_id — the customer no longer has the feature (checks: no_entitlement). */
export function deleteEntitlementRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/entitlements/:entitlement_id',
    auth: 'admin',
    handler: async (ctx) => {
      await deleteEntitlement(deps.pg, ctx.params.entitlement_id!);
      return reply.noContent();
    },
    doc: {
      summary: 'Delete an entitlement (with its grants)',
      tags: ['entitlements'],
      responses: { '204': { description: 'Deleted' } },
    },
  };
}
