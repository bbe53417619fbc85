import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createCreditGrantRoute } from './create.js';
import { listCreditGrantsRoute } from './list.js';
import { getCreditGrantRoute } from './get.js';

/** /v1/billing/credits: prepaid credit grants (operators grant, accounts read; the billing run spends them). */
export const creditsModule: RouteModuleFactory = (deps) => ({
  name: 'credits',
  area: 'control',
  register(server) {
    server.route(createCreditGrantRoute(deps));
    server.route(listCreditGrantsRoute(deps));
    server.route(getCreditGrantRoute(deps));
  },
});
