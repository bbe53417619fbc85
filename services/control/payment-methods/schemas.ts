import Type from 'typebox';
import { PaginationQuery } from '../../../shared/http/pagination.js';
import { CARD_BRANDS } from '../../domain/payment-methods/card.js';
import type { PaymentMethodRow } from '../../domain/payment-methods/types.js';

/** Shape checks only; card.ts does the semantic ones (Luhn, expiry, CVC length per brand). */
export const CreatePaymentMethodBody = Type.Object(
  {
    type: Type.Enum(['card'], { description: 'only "card" is supported' }),
    card: Type.Object(
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
      { additionalProperties: false },
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

export const ListPaymentMethodsQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });

/** The API representation. */
export function toPaymentMethod(r: PaymentMethodRow): PaymentMethod {
  return {
    id: r.id,
    type: r.type,
    card: { brand: r.brand, last4: r.last4, exp_month: r.exp_month, exp_year: r.exp_year },
    is_default: r.is_default,
    created_at: r.created_at.toISOString(),
  };
}
