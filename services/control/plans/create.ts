import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreatePlanBody, PlanSchema } from '../../../shared/api/plans.js';
import type { NewPlan } from '../../domain/plans/types.js';
import { insertPlan } from '../../domain/plans/store.js';
import { parseNewPlan } from './input.js';
import { toPlan } from './representation.js';

/** POST /v1/plans — admin: a plan and its version 1 (docs/plans.md). */
export function createPlanRoute(deps: ApiDeps): RouteDef<NewPlan> {
  return {
    method: 'POST',
    path: '/v1/plans',
    auth: 'admin',
    input: parseNewPlan,
    handler: async (_ctx, plan) => {
      const v = await insertPlan(deps.pg, plan);
      return reply.created(toPlan(v), `/v1/plans/${v.plan_id}`);
    },
    doc: {
      summary: 'Create a plan (its version 1)',
      tags: ['plans'],
      requestBody: CreatePlanBody,
      responses: { '201': { description: 'The plan’s version 1 (Location names the plan)', schema: PlanSchema } },
    },
  };
}
