import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, PaginationSchema } from '../http/pagination.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });

export const CreateCreditGrantBody = Type.Object(
  {
    account_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'acct_… of the account credited (or customer_id)' }),
    ),
    customer_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'cus_… of the customer credited (or account_id)' }),
    ),
    amount: Type.Number({
      exclusiveMinimum: 0,
      description: "the credit, > 0, with at most the currency's minor-unit decimals (USD 2, JPY 0)",
    }),
    currency: Type.String({
      pattern: CURRENCY_CODE_PATTERN,
      errorMessage: CURRENCY_CODE_MESSAGE,
      description: 'ISO 4217; applies to invoices in this currency only',
    }),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'RFC 3339, in the future; not applied to invoices created from then on. Absent: never expires',
      }),
    ),
    description: PrintableText({ maxLength: 500 }),
  },
  { additionalProperties: false },
);
export type CreateCreditGrantBody = Type.Static<typeof CreateCreditGrantBody>;

export const CreditGrantSchema = Type.Object(
  {
    id: Type.String({ examples: ['cred_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    account_id: Type.String(),
    amount: Money('granted'),
    remaining: Money('not yet applied to invoices'),
    currency: Type.String(),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    description: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const CreditGrantListSchema = Type.Object(
  {
    data: Type.Array(CreditGrantSchema),
    pagination: PaginationSchema,
    balance: Type.Array(
      Type.Object(
        { currency: Type.String(), amount: Money('spendable now: the remaining credit of unexpired grants') },
        { additionalProperties: false },
      ),
      {
        description: 'per currency, of all the account’s grants (not only this page)',
      },
    ),
  },
  { additionalProperties: false },
);

export const ListCreditGrantsQuery = Type.Object(
  {
    ...PaginationQuery,
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): that customer’s grants and balance; any other token may name only itself',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListCreditGrantsQuery = Type.Static<typeof ListCreditGrantsQuery>;
