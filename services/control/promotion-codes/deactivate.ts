import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PromotionCodeSchema } from '../../../shared/api/promotion-codes.js';
import { deactivatePromotionCode } from '../../domain/promotion-codes/store.js';
import { toPromotionCode } from './representation.js';

/** POST /v1/promotion_codes/:promotion_code_id/deactivate — admin: no redemption from now on; for good. */
export function deactivatePromotionCodeRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/promotion_codes/:promotion_code_id/deactivate',
    auth: 'admin',
    handler: async (ctx) =>
      reply.ok(toPromotionCode(await deactivatePromotionCode(deps.pg, ctx.params.promotion_code_id!))),
    doc: {
      summary: 'Deactivate a promotion code (redemptions made stay; none from now on)',
      tags: ['promotion codes'],
      responses: { '200': { description: 'The promotion code, active false', schema: PromotionCodeSchema } },
    },
  };
}
