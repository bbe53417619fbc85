import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListPlansQuery, PlanListSchema } from '../../../shared/api/plans.js';
import { listPlans } from '../../domain/plans/store.js';
import { parseListPlans } from './input.js';
import { toPlan } from './representation.js';

/** GET /v1/plans — every token: the deployment's plans, each as its latest version, newest first. */
export function listPlansRoute(deps: ApiDeps): RouteDef<ListPlansQuery> {
  return {
    method: 'GET',
    path: '/v1/plans',
    auth: 'read',
    input: parseListPlans,
    handler: async (_ctx, q) => {
      const { rows, total } = await listPlans(deps.pg, pageWindow(q));
      return reply.page(rows.map(toPlan), q, total);
    },
    doc: {
      summary: 'List plans (newest first, each as its latest version)',
      tags: ['plans'],
      query: ListPlansQuery,
      responses: { '200': { description: 'A page of plans', schema: PlanListSchema } },
    },
  };
}
