import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateGrantBody, GrantSchema } from '../../../shared/api/entitlements.js';
import { insertGrant } from '../../domain/entitlements/store.js';
import type { NewGrant } from '../../domain/entitlements/types.js';
import { parseNewGrant } from './input.js';
import { toGrant } from './representation.js';

/** POST /v1/entitlements/:entitlement_id/grants — a top-up of the current period's limit (never of the next). */
export function createGrantRoute(deps: ApiDeps): RouteDef<NewGrant> {
  return {
    method: 'POST',
    path: '/v1/entitlements/:entitlement_id/grants',
    auth: 'admin',
    input: parseNewGrant,
    handler: async (ctx, grant) => {
      const id = ctx.params.entitlement_id!;
      const row = await insertGrant(deps.pg, id, grant);
      return reply.created(toGrant(row), `/v1/entitlements/${id}`);
    },
    doc: {
      summary: 'Add to a metered entitlement’s limit for the current period',
      tags: ['entitlements'],
      requestBody: CreateGrantBody,
      responses: {
        '201': { description: 'The grant; 409 entitlement_not_metered for a boolean entitlement', schema: GrantSchema },
      },
    },
  };
}
