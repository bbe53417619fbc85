import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';
import { COUPON_DURATIONS } from '../vocabulary.js';

/** Coupons (admin: the deployment's) and the discount a subscription carries (docs/coupons.md). */

export const CreateCouponBody = Type.Object(
  {
    name: PrintableText({ maxLength: 200, description: 'printed on discount lines, e.g. "SPRING25"' }),
    percent_off: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 100,
        description: 'an exact decimal, 0 < p ≤ 100, at most 4 decimals (or amount_off)',
      }),
    ),
    amount_off: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description: "an exact decimal > 0 in the currency's minor unit (USD 2, JPY 0), per invoice (or percent_off)",
      }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: CURRENCY_CODE_PATTERN,
        errorMessage: CURRENCY_CODE_MESSAGE,
        description: 'ISO 4217, with amount_off only: the coupon applies to subscriptions in this currency',
      }),
    ),
    currency_options: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          { amount_off: Type.Number({ exclusiveMinimum: 0, description: "exact, in that currency's minor unit" }) },
          { additionalProperties: false },
        ),
        {
          maxProperties: 50,
          description:
            'price books, with amount_off only: the amount in other currencies than `currency`, keyed by ISO 4217 code — {"JPY": {"amount_off": 1500}}; a subscription in a currency the coupon has no amount in cannot redeem it',
        },
      ),
    ),
    duration: Type.Enum(COUPON_DURATIONS, {
      description:
        'once: the next invoice; repeating: the invoices of duration_in_periods usage periods (months on quarterly and yearly plans); forever: every invoice',
    }),
    duration_in_periods: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 120, description: 'required with (and only with) duration "repeating"' }),
    ),
    max_redemptions: Type.Optional(
      Type.Integer({ minimum: 1, description: 'how many subscriptions may redeem it in all; absent: no limit' }),
    ),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'RFC 3339, in the future: no redemption from then on' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCouponBody = Type.Static<typeof CreateCouponBody>;

export const CouponSchema = Type.Object(
  {
    id: Type.String({ examples: ['coupon_7hK2sP9xR1mV4rT8bN3cJ0'] }),
    name: Type.String(),
    percent_off: Type.Union([Type.Number(), Type.Null()]),
    amount_off: Type.Union([Type.Number(), Type.Null()]),
    currency: Type.Union([Type.String(), Type.Null()]),
    currency_options: Type.Record(Type.String(), Type.Object({ amount_off: Type.Number() }), {
      description: 'amount_off in other currencies than `currency` (price books); {} for percent_off coupons',
    }),
    duration: Type.Enum(COUPON_DURATIONS),
    duration_in_periods: Type.Union([Type.Integer(), Type.Null()]),
    max_redemptions: Type.Union([Type.Integer(), Type.Null()]),
    times_redeemed: Type.Integer(),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const CouponListSchema = listOf(CouponSchema);

export const ListCouponsQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type ListCouponsQuery = Type.Static<typeof ListCouponsQuery>;

/**
 * The coupon as a subscription shows it — its customer reads it too, so only its terms: how often the operator's
 * coupon was redeemed by others, its limit and expiry are the operator's (GET /v1/coupons/{id}).
 */
export const DiscountCouponSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    percent_off: Type.Union([Type.Number(), Type.Null()]),
    amount_off: Type.Union([Type.Number(), Type.Null()]),
    currency: Type.Union([Type.String(), Type.Null()]),
    currency_options: Type.Record(Type.String(), Type.Object({ amount_off: Type.Number() }), {
      description: 'amount_off in other currencies than `currency` (price books); {} for percent_off coupons',
    }),
    duration: Type.Enum(COUPON_DURATIONS),
    duration_in_periods: Type.Union([Type.Integer(), Type.Null()]),
  },
  { additionalProperties: false },
);

/** A subscription's current discount: the coupon and the periods it discounts. */
export const DiscountSchema = Type.Union(
  [
    Type.Object(
      {
        coupon: DiscountCouponSchema,
        start: Type.String({
          format: 'date-time',
          description: 'the start of the usage period it was applied in (a month inside a quarterly or yearly period)',
        }),
        redeemed_at: Type.String({ format: 'date-time' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'the coupon applied (PATCH coupon_id), or null' },
);

export const CouponIdInput = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
  description: 'operators (admin): the coupon (coupon_…) applied from the current period on; null removes it',
});
