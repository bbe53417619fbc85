import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { getUsageRoute } from './get-usage.js';

/** Control-plane read of usage (ClickHouse), mounted with the other control routes. */
export const usageQueryModule: RouteModuleFactory = (infra) => ({
  name: 'usage-query',
  area: 'control',
  register(server) {
    server.route(getUsageRoute(infra));
  },
});
