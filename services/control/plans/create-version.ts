import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreatePlanVersionBody, PlanSchema } from '../../../shared/api/plans.js';
import type { PlanVersionChange } from '../../domain/plans/types.js';
import { addPlanVersion } from '../../domain/plans/store.js';
import { parsePlanVersionChange } from './input.js';
import { toPlan } from './representation.js';

/** POST /v1/plans/:plan_id/versions — admin: the next version (earlier ones never change: subscribers keep theirs). */
export function createPlanVersionRoute(deps: ApiDeps): RouteDef<PlanVersionChange> {
  return {
    method: 'POST',
    path: '/v1/plans/:plan_id/versions',
    auth: 'admin',
    input: parsePlanVersionChange,
    handler: async (ctx, change) => {
      const v = await addPlanVersion(deps.pg, ctx.params.plan_id!, change);
      return reply.created(toPlan(v), `/v1/plans/${v.plan_id}?version=${v.version}`);
    },
    doc: {
      summary: 'Make the next version of a plan: the latest with these fields changed',
      tags: ['plans'],
      requestBody: CreatePlanVersionBody,
      responses: { '201': { description: 'The new version', schema: PlanSchema } },
    },
  };
}
