import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { getSellerSettingsRoute } from './get.js';
import { updateSellerSettingsRoute } from './update.js';

/** /v1/seller_settings: the operator's seller and branding, printed on every document and email. */
export const sellerSettingsModule: RouteModuleFactory = (deps) => ({
  name: 'seller-settings',
  area: 'control',
  register(server) {
    for (const route of [getSellerSettingsRoute, updateSellerSettingsRoute]) server.route(route(deps));
  },
});
