import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createAlertRoute } from './create.js';
import { listAlertsRoute } from './list.js';
import { getAlertRoute } from './get.js';
import { deleteAlertRoute } from './delete.js';

/** /v1/alerts: usage and spend alerts (docs/alerts.md); the billing role evaluates them. */
export const alertsModule: RouteModuleFactory = (deps) => ({
  name: 'alerts',
  area: 'control',
  register(server) {
    for (const route of [createAlertRoute, listAlertsRoute, getAlertRoute, deleteAlertRoute]) server.route(route(deps));
  },
});
