import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { getBillingRoute } from './get.js';
import { updateBillingRoute } from './update.js';

/** /v1/billing: customer id, default payment method and billing address of the caller's account. */
export const billingInfoModule: RouteModuleFactory = (deps) => ({
  name: 'billing',
  area: 'control',
  register(server) {
    server.route(getBillingRoute(deps));
    server.route(updateBillingRoute(deps));
  },
});
