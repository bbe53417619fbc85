import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createPromotionCodeRoute } from './create.js';
import { deactivatePromotionCodeRoute } from './deactivate.js';
import { getPromotionCodeRoute } from './get.js';
import { listPromotionCodesRoute } from './list.js';

/** /v1/promotion_codes: the deployment's customer-facing coupon codes, admin only (docs/checkout.md). */
export const promotionCodesModule: RouteModuleFactory = (deps) => ({
  name: 'promotion-codes',
  area: 'control',
  register(server) {
    for (const route of [
      listPromotionCodesRoute,
      getPromotionCodeRoute,
      createPromotionCodeRoute,
      deactivatePromotionCodeRoute,
    ])
      server.route(route(deps));
  },
});
