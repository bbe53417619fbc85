import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PromotionCodeSchema } from '../../../shared/api/promotion-codes.js';
import { getPromotionCode } from '../../domain/promotion-codes/store.js';
import { toPromotionCode } from './representation.js';

/** GET /v1/promotion_codes/:promotion_code_id — admin. */
export function getPromotionCodeRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/promotion_codes/:promotion_code_id',
    auth: 'admin',
    handler: async (ctx) => reply.ok(toPromotionCode(await getPromotionCode(deps.pg, ctx.params.promotion_code_id!))),
    doc: {
      summary: 'Get a promotion code',
      tags: ['promotion codes'],
      responses: { '200': { description: 'The promotion code', schema: PromotionCodeSchema } },
    },
  };
}
