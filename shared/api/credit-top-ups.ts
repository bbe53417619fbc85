import Type from 'typebox';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';

/** Prepaid credit bought by the customer (docs/credits.md "Prepaid credit"). */

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });

export const CreateCreditTopUpBody = Type.Object(
  {
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'cus_… of the customer buying (operators); a customer’s own token may omit it or name itself',
      }),
    ),
    amount: Type.Number({
      exclusiveMinimum: 0,
      description: "the credit bought and charged, > 0, with at most the currency's minor-unit decimals (USD 2, JPY 0)",
    }),
    currency: Type.Optional(
      Type.String({
        pattern: CURRENCY_CODE_PATTERN,
        errorMessage: CURRENCY_CODE_MESSAGE,
        description: 'ISO 4217. Absent: the currency of the customer’s newest subscription',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCreditTopUpBody = Type.Static<typeof CreateCreditTopUpBody>;

export const CreditTopUpSchema = Type.Object(
  {
    id: Type.String({ examples: ['ctu_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    customer_id: Type.String(),
    amount: Money('the credit bought'),
    currency: Type.String(),
    status: Type.Enum(['pending', 'paid', 'failed'], {
      description:
        'pending: being charged, or waiting for the customer (3-D Secure, on the invoice’s hosted page); paid: the credit is granted (grant_id); failed: the charge failed (failure_code), nothing granted — the invoice is left uncollectible and paying it later still grants the credit',
    }),
    failure_code: Type.Union([Type.String(), Type.Null()], { description: 'why the charge failed (card_declined, …)' }),
    trigger: Type.Enum(['manual', 'auto_recharge'], { description: 'bought on request, or by auto-recharge' }),
    invoice_id: Type.String({ description: 'the top-up invoice (reason top_up) charged for it' }),
    grant_id: Type.Union([Type.String(), Type.Null()], { description: 'the credit grant made once it was paid' }),
    created_at: Type.String({ format: 'date-time' }),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
