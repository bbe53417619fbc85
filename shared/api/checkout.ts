import Type from 'typebox';
import { MAX_URL_LENGTH } from '../vocabulary.js';
import { PROMOTION_CODE_PATTERN } from './promotion-codes.js';

/** Checkout sessions (admin) and what the hosted checkout page's script posts (docs/checkout.md). */

const RedirectUrl = (what: string) =>
  Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: `http(s):// URL ${what}` });

export const CreateCheckoutSessionBody = Type.Object(
  {
    plan_id: Type.String({ minLength: 1, maxLength: 64, description: 'the plan the customer subscribes to' }),
    plan_version: Type.Optional(
      Type.Integer({ minimum: 1, description: 'default: the latest when the customer pays' }),
    ),
    customer_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'an existing customer (cus_…)' }),
    ),
    customer_email: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 320,
        pattern: '^[^\\s@]+@[^\\s@]+$',
        errorMessage: 'must be an email address',
        description: 'or: a new customer, created with this email when the page first sets up a card',
      }),
    ),
    success_url: RedirectUrl('the page sends the customer to once subscribed, with ?session_id=cs_… added'),
    cancel_url: RedirectUrl('the page’s "Cancel" link leads back to'),
    trial_days: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 730, description: 'a trial of its own (default: the plan’s)' }),
    ),
    coupon_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'a coupon applied at once' })),
    allow_promotion_codes: Type.Optional(
      Type.Boolean({ description: 'the page takes a promotion code (not with coupon_id); default false' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCheckoutSessionBody = Type.Static<typeof CreateCheckoutSessionBody>;

const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const CheckoutSessionSchema = Type.Object(
  {
    id: Type.String({ examples: ['cs_7hK2sP9xR1mV4rT8bN3cJ0'] }),
    url: Type.String({ format: 'uri', description: 'the hosted checkout page (the link is the secret)' }),
    status: Type.Enum(['open', 'complete', 'expired']),
    expires_at: Type.String({ format: 'date-time' }),
    plan_id: Type.String(),
    plan_version: Nullable(Type.Integer()),
    customer_id: Nullable(Type.String({ description: 'the customer named, or created by the page; null until then' })),
    customer_email: Nullable(Type.String()),
    success_url: Type.String(),
    cancel_url: Type.String(),
    trial_days: Nullable(Type.Integer()),
    coupon_id: Nullable(Type.String()),
    allow_promotion_codes: Type.Boolean(),
    subscription_id: Nullable(Type.String({ description: 'once complete: the subscription it made' })),
    promotion_code_id: Nullable(Type.String({ description: 'once complete: the code redeemed, if any' })),
    completed_at: Nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

/** POST /hosted/checkout/{id}/{token}/complete */
export const HostedCheckoutCompleteBody = Type.Object(
  {
    payment_method: Type.String({
      pattern: '^pm_[A-Za-z0-9_]{1,250}$',
      description: "the card set up in Stripe's card element (`pm_…`)",
    }),
    promotion_code: Type.Optional(
      Type.String({ pattern: `^$|${PROMOTION_CODE_PATTERN}`, errorMessage: 'letters, digits, "-" or "_"' }),
    ),
  },
  { additionalProperties: false },
);
export type HostedCheckoutCompleteBody = Type.Static<typeof HostedCheckoutCompleteBody>;

export const HostedCheckoutDoneSchema = Type.Object(
  {
    status: Type.Literal('complete'),
    redirect_url: Type.String({ description: 'success_url with ?session_id=' }),
  },
  { additionalProperties: false },
);
