import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { CreatePromotionCodeBody, ListPromotionCodesQuery } from '../../../shared/api/promotion-codes.js';
import type { NewPromotionCode } from '../../domain/promotion-codes/types.js';

/** Promotion codes' one validation place: the schema, then a future expiry. */
const createBody = bodyValidator<CreatePromotionCodeBody>(CreatePromotionCodeBody);
const listQuery = queryValidator<ListPromotionCodesQuery>(ListPromotionCodesQuery);

export const parseListPromotionCodes = (ctx: RequestContext): ListPromotionCodesQuery =>
  listQuery.parseQuery(ctx.query);

export function parseNewPromotionCode(ctx: RequestContext, now = new Date()): NewPromotionCode {
  const input = createBody.parse(ctx.body);
  const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
  if (expiresAt && !(expiresAt.getTime() > now.getTime()))
    throw new ValidationError([{ field: 'expires_at', message: 'must be in the future' }]);
  return {
    coupon_id: input.coupon_id,
    code: input.code,
    max_redemptions: input.max_redemptions ?? null,
    expires_at: expiresAt,
    first_time_only: input.first_time_only ?? false,
  };
}
