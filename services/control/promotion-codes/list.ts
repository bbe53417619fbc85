import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListPromotionCodesQuery, PromotionCodeListSchema } from '../../../shared/api/promotion-codes.js';
import { listPromotionCodes } from '../../domain/promotion-codes/store.js';
import { parseListPromotionCodes } from './input.js';
import { toPromotionCode } from './representation.js';

/** GET /v1/promotion_codes — admin: the deployment's codes, newest first, by coupon or by code. */
export function listPromotionCodesRoute(deps: ApiDeps): RouteDef<ListPromotionCodesQuery> {
  return {
    method: 'GET',
    path: '/v1/promotion_codes',
    auth: 'admin',
    input: parseListPromotionCodes,
    handler: async (_ctx, q) => {
      const { rows, total } = await listPromotionCodes(deps.pg, { couponId: q.coupon_id, code: q.code }, pageWindow(q));
      return reply.page(rows.map(toPromotionCode), q, total);
    },
    doc: {
      summary: 'List promotion codes (newest first)',
      tags: ['promotion codes'],
      query: ListPromotionCodesQuery,
      responses: { '200': { description: 'A page of promotion codes', schema: PromotionCodeListSchema } },
    },
  };
}
