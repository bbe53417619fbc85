import Type from 'typebox';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';

/** A customer's wallet settings: auto-recharge and the low-balance alert (docs/credits.md). */

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });

const AutoRecharge = Type.Object(
  {
    enabled: Type.Boolean(),
    threshold: Type.Number({ minimum: 0, description: 'buy when a spend takes the balance below this' }),
    amount: Type.Number({ exclusiveMinimum: 0, description: 'the credit each automatic top-up buys' }),
    max_per_month: Type.Integer({
      minimum: 1,
      maximum: 100,
      description: 'automatic top-ups per calendar month (UTC)',
    }),
  },
  { additionalProperties: false },
);

export const PutCreditSettingsBody = Type.Object(
  {
    customer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'cus_… (operators)' })),
    currency: Type.String({
      pattern: CURRENCY_CODE_PATTERN,
      errorMessage: CURRENCY_CODE_MESSAGE,
      description: 'the wallet’s currency: the balance watched and the credit bought',
    }),
    auto_recharge: Type.Union([AutoRecharge, Type.Null()], { description: 'null: off' }),
    low_balance_threshold: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: 'credit.balance_low once when the balance falls below it; null: no alert',
    }),
  },
  { additionalProperties: false },
);
export type PutCreditSettingsBody = Type.Static<typeof PutCreditSettingsBody>;

export const GetCreditSettingsQuery = Type.Object(
  { customer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);
export type GetCreditSettingsQuery = Type.Static<typeof GetCreditSettingsQuery>;

export const CreditSettingsSchema = Type.Object(
  {
    customer_id: Type.String(),
    currency: Type.Union([Type.String(), Type.Null()], { description: 'null: never set' }),
    balance: Money('spendable now in that currency'),
    auto_recharge: Type.Union([
      Type.Object(
        {
          enabled: Type.Boolean(),
          threshold: Money('the threshold'),
          amount: Money('bought each time'),
          max_per_month: Type.Integer(),
          top_ups_this_month: Type.Integer({ description: 'automatic top-ups made this calendar month (UTC)' }),
          in_flight: Type.Boolean({ description: 'an automatic top-up is being charged' }),
          last_failure: Type.Union(
            [
              Type.Object(
                { code: Type.String(), at: Type.String({ format: 'date-time' }) },
                { additionalProperties: false },
              ),
              Type.Null(),
            ],
            { description: 'the last automatic top-up failed: auto-recharge waits until the settings are saved again' },
          ),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    low_balance_threshold: Type.Union([Money('the alert threshold'), Type.Null()]),
  },
  { additionalProperties: false },
);
