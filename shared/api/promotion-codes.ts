import Type from 'typebox';
import { PaginationQuery, listOf } from '../http/pagination.js';

/** Promotion codes (admin: the deployment's): customer-facing codes for coupons (docs/checkout.md). */

export const PROMOTION_CODE_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const CODE_MESSAGE = 'must be 1 to 64 letters, digits, "-" or "_"';

export const CreatePromotionCodeBody = Type.Object(
  {
    coupon_id: Type.String({ minLength: 1, maxLength: 64, description: 'the coupon the code applies' }),
    code: Type.String({
      pattern: PROMOTION_CODE_PATTERN,
      errorMessage: CODE_MESSAGE,
      description: 'what customers type, e.g. "SPRING25"; unique in the deployment whatever its case',
    }),
    max_redemptions: Type.Optional(
      Type.Integer({ minimum: 1, description: 'how many times the code may be redeemed in all; absent: no limit' }),
    ),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'RFC 3339, in the future: no redemption from then on' }),
    ),
    first_time_only: Type.Optional(
      Type.Boolean({ description: 'only for customers never invoiced before (default false)' }),
    ),
  },
  { additionalProperties: false },
);
export type CreatePromotionCodeBody = Type.Static<typeof CreatePromotionCodeBody>;

export const PromotionCodeSchema = Type.Object(
  {
    id: Type.String({ examples: ['promo_7hK2sP9xR1mV4rT8bN3cJ0'] }),
    coupon_id: Type.String(),
    code: Type.String(),
    max_redemptions: Type.Union([Type.Integer(), Type.Null()]),
    times_redeemed: Type.Integer(),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    first_time_only: Type.Boolean(),
    active: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const PromotionCodeListSchema = listOf(PromotionCodeSchema);

export const ListPromotionCodesQuery = Type.Object(
  {
    ...PaginationQuery,
    coupon_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only this coupon’s codes' })),
    code: Type.Optional(
      Type.String({ pattern: PROMOTION_CODE_PATTERN, errorMessage: CODE_MESSAGE, description: 'this code, any case' }),
    ),
  },
  { additionalProperties: false },
);
export type ListPromotionCodesQuery = Type.Static<typeof ListPromotionCodesQuery>;
