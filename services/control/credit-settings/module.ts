import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { getCreditSettingsRoute } from './get.js';
import { putCreditSettingsRoute } from './put.js';

/** /v1/credit_settings: a customer's wallet settings (auto-recharge, low-balance alert); the billing run acts on them. */
export const creditSettingsModule: RouteModuleFactory = (deps) => ({
  name: 'credit-settings',
  area: 'control',
  register(server) {
    server.route(getCreditSettingsRoute(deps));
    server.route(putCreditSettingsRoute(deps));
  },
});
