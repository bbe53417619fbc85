import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { listEventsRoute } from './list.js';
import { getEventRoute } from './get.js';

/** /v1/events: the account's events (the outbox), so a receiver that was down can reconcile. */
export const eventsModule: RouteModuleFactory = (deps) => ({
  name: 'events',
  area: 'control',
  register(server) {
    server.route(listEventsRoute(deps));
    server.route(getEventRoute(deps));
  },
});
