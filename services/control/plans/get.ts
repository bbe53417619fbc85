import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
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
    handler: (ctx, q) => {
      const id = ctx.params.plan_id!;
      return okFromCache(deps.reads.of('plans'), `${id}\n${q.version ?? 'latest'}`, async () =>
        toPlan(await getPlanVersion(deps.pg, id, q.version)),
      );
    },
    doc: {
      summary: 'Get a plan’s version (default: the latest)',
      tags: ['plans'],
      query: GetPlanQuery,
      responses: { '200': { description: 'The version', schema: PlanSchema } },
    },
  };
}
