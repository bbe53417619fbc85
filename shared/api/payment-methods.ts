import Type from 'typebox';
import { PaginationQuery } from '../http/pagination.js';
import { CARD_BRANDS } from '../vocabulary.js';

/**
 * Shape checks only; card.ts does the semantic ones (Luhn, expiry, CVC length per brand). Exactly one of `card` (raw
 * details: the sandbox only) and `payment_method` (a card the processor tokenised: Stripe) — docs/payments.md.
 */
export const CreatePaymentMethodBody = Type.Object(
  {
    type: Type.Enum(['card'], { description: 'only "card" is supported' }),
    payment_method: Type.Optional(
      Type.String({
        pattern: '^pm_[A-Za-z0-9_]{1,250}$',
        description:
          "a Stripe PaymentMethod id (`pm_…`) from Stripe's card element, with PAYMENT_PROCESSOR=stripe: saved with a SetupIntent for off-session charges",
      }),
    ),
    card: Type.Optional(
      Type.Object(
        {
          number: Type.String({
            minLength: 1,
            maxLength: 64,
            description: '12–19 digits; spaces and dashes between digits are ignored',
          }),
          exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
          exp_year: Type.Integer({ description: 'four-digit year; the card must not have expired (UTC month)' }),
          cvc: Type.String({ maxLength: 8, description: '3 or 4 digits; 4 for American Express' }),
        },
        {
          additionalProperties: false,
          description:
            'raw card details: the sandbox processor (Stripe refuses them: 422 `raw_card_refused`, unless the operator opted in to forward them: STRIPE_FORWARD_RAW_CARDS)',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const PaymentMethodSchema = Type.Object(
  {
    id: Type.String({ description: 'pm_…' }),
    type: Type.Enum(['card']),
    card: Type.Object(
      {
        brand: Type.Enum([...CARD_BRANDS]),
        last4: Type.String({ pattern: '^[0-9]{4}$' }),
        exp_month: Type.Integer(),
        exp_year: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    is_default: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export interface PaymentMethod {
  id: string;
  type: 'card';
  card: { brand: string; last4: string; exp_month: number; exp_year: number };
  is_default: boolean;
  created_at: string;
}

export const ListPaymentMethodsQuery = Type.Object(
  {
    ...PaginationQuery,
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): that customer’s payment methods; any other token may name only itself',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListPaymentMethodsQuery = Type.Static<typeof ListPaymentMethodsQuery>;
