import Type from 'typebox';
import { PrintableText } from './text.js';
import { CARD_BRANDS } from '../vocabulary.js';

const line = (description: string) => PrintableText({ maxLength: 200, description });

export const BillingAddressSchema = Type.Object(
  {
    line1: line('street and number'),
    city: line('city'),
    state: line('state, province or region'),
    zip: line('postal code'),
  },
  { additionalProperties: false },
);

/** PATCH replaces the whole address: all four lines are required. */
export const UpdateBillingBody = Type.Object(
  { billing_address: BillingAddressSchema },
  { additionalProperties: false },
);

export const BillingInfoSchema = Type.Object(
  {
    customer_id: Type.String({ description: 'cus_…' }),
    payment_method: Type.Union([
      Type.Object(
        { id: Type.String(), type: Type.Enum(['card']), last4: Type.String(), brand: Type.Enum([...CARD_BRANDS]) },
        { additionalProperties: false, description: 'the default payment method' },
      ),
      Type.Null(),
    ]),
    billing_address: Type.Union([BillingAddressSchema, Type.Null()]),
  },
  { additionalProperties: false },
);

export type BillingAddress = Type.Static<typeof BillingAddressSchema>;
