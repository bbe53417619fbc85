import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { CreatePromotionCodeBody, PromotionCodeSchema } from '../../../shared/api/promotion-codes.js';
import type { NewPromotionCode } from '../../domain/promotion-codes/types.js';
import { insertPromotionCode } from '../../domain/promotion-codes/store.js';
import { parseNewPromotionCode } from './input.js';
import { toPromotionCode } from './representation.js';

/** POST /v1/promotion_codes — admin: a customer-facing code for a coupon (docs/checkout.md). */
export function createPromotionCodeRoute(deps: ApiDeps): RouteDef<NewPromotionCode> {
  return {
    method: 'POST',
    path: '/v1/promotion_codes',
    auth: 'admin',
    input: (ctx) => parseNewPromotionCode(ctx),
    handler: async (_ctx, code) => {
      const row = await insertPromotionCode(deps.pg, code);
      return reply.created(toPromotionCode(row), `/v1/promotion_codes/${row.id}`);
    },
    doc: {
      summary: 'Create a promotion code for a coupon',
      tags: ['promotion codes'],
      requestBody: CreatePromotionCodeBody,
      responses: {
        '201': { description: 'The promotion code (Location names it)', schema: PromotionCodeSchema },
        '409': problemResponse('the code is taken, in any case (`promotion_code_taken`)'),
        '422': problemResponse('no such coupon (`coupon_id`), or a bad field'),
      },
    },
  };
}
