import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { GetPlanQuery, PlanSchema } from '../../../shared/api/plans.js';
import { getPlanVersion } from '../../domain/plans/store.js';
import { parseGetPlan } from './input.js';
import { toPlan } from './representation.js';

/** GET /v1/plans/:plan_id?version= — every token: a version of a plan (default the latest); unknown → 404. */
export function getPlanRoute(deps: ApiDeps): RouteDef<GetPlanQuery> {
  return {
    method: 'GET',
    path: '/v1/plans/:plan_id',
    auth: 'read',
    input: parseGetPlan,
    handler: async (ctx, q) => reply.ok(toPlan(await getPlanVersion(deps.pg, ctx.params.plan_id!, q.version))),
    doc: {
      summary: 'Get a plan’s version (default: the latest)',
      tags: ['plans'],
      query: GetPlanQuery,
      responses: { '200': { description: 'The version', schema: PlanSchema } },
    },
  };
}
