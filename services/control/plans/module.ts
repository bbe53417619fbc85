import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { listPlansRoute } from './list.js';
import { getPlanRoute } from './get.js';
import { createPlanRoute } from './create.js';
import { createPlanVersionRoute } from './create-version.js';
import { migratePlanRoute } from './migrate.js';

/** /v1/plans: the deployment's plans and versions (admin writes, every token reads). */
export const plansModule: RouteModuleFactory = (deps) => ({
  name: 'plans',
  area: 'control',
  register(server) {
    for (const route of [listPlansRoute, getPlanRoute, createPlanRoute, createPlanVersionRoute, migratePlanRoute])
      server.route(route(deps));
  },
});
