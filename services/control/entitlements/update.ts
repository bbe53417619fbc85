import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { EntitlementSchema, UpdateEntitlementBody } from '../../../shared/api/entitlements.js';
import { updateEntitlement } from '../../domain/entitlements/store.js';
import type { EntitlementChange } from '../../domain/entitlements/types.js';
import { parseEntitlementChange } from './input.js';
import { toEntitlement } from './representation.js';

/** PATCH /v1/entitlements/:entitlement_id — an operator changes a metered entitlement's limit, period or overage. */
export function updateEntitlementRoute(deps: ApiDeps): RouteDef<EntitlementChange> {
  return {
    method: 'PATCH',
    path: '/v1/entitlements/:entitlement_id',
    auth: 'admin',
    input: parseEntitlementChange,
    handler: async (ctx, change) =>
      reply.ok(toEntitlement(await updateEntitlement(deps.pg, ctx.params.entitlement_id!, change))),
    doc: {
      summary: 'Change a metered entitlement’s limit, period or overage',
      tags: ['entitlements'],
      requestBody: UpdateEntitlementBody,
      responses: { '200': { description: 'The entitlement as changed', schema: EntitlementSchema } },
    },
  };
}
