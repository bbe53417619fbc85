import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { listSubscriptionsRoute } from './list.js';
import { getSubscriptionRoute } from './get.js';
import { createSubscriptionRoute } from './create.js';
import { updateSubscriptionRoute } from './update.js';
import { planChangeRoute } from './plan-change.js';

/** /v1/subscriptions: list, get, create, PATCH (items, cancel), plan changes; every change emits subscription.updated. */
export const subscriptionsModule: RouteModuleFactory = (deps) => ({
  name: 'subscriptions',
  area: 'control',
  register(server) {
    for (const route of [
      listSubscriptionsRoute,
      getSubscriptionRoute,
      createSubscriptionRoute,
      updateSubscriptionRoute,
      planChangeRoute,
    ])
      server.route(route(deps));
  },
});
