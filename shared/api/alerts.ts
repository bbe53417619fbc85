import Type from 'typebox';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';
import { ALERT_METRICS } from '../vocabulary.js';

/** Usage and spend alerts (docs/alerts.md). */

/** Thresholds one alert may hold. */
export const MAX_ALERT_THRESHOLDS = 20;

export const CreateAlertBody = Type.Object(
  {
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'cus_… of the customer watched. Absent: the caller itself; an admin token on a deployment meter: every customer of it',
      }),
    ),
    metric: Type.Optional(
      Type.Enum([...ALERT_METRICS], {
        description:
          '`usage` (default): the meter’s aggregation over the billing period; `amount`: the period’s invoice amount so far',
      }),
    ),
    meter_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'mtr_… (usage alerts): the meter watched' }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: CURRENCY_CODE_PATTERN,
        errorMessage: CURRENCY_CODE_MESSAGE,
        description: 'ISO 4217 (amount alerts): the invoices watched are those in this currency',
      }),
    ),
    thresholds: Type.Array(Type.Number({ exclusiveMinimum: 0 }), {
      minItems: 1,
      maxItems: MAX_ALERT_THRESHOLDS,
      description:
        'positive exact decimals (amount alerts: at most the currency’s minor-unit decimals); stored ascending without repeats',
    }),
  },
  { additionalProperties: false },
);
export type CreateAlertBody = Type.Static<typeof CreateAlertBody>;

export const AlertSchema = Type.Object(
  {
    id: Type.String({ examples: ['alrt_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    customer_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the customer watched; null: every customer of the deployment meter',
    }),
    metric: Type.Enum([...ALERT_METRICS]),
    meter_id: Type.Union([Type.String(), Type.Null()]),
    currency: Type.Union([Type.String(), Type.Null()]),
    thresholds: Type.Array(Type.Number(), { description: 'ascending exact decimals' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const AlertListSchema = listOf(AlertSchema);

export const ListAlertsQuery = Type.Object(
  {
    ...PaginationQuery,
    customer_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'admin: only the alerts on this customer (cus_…)' }),
    ),
  },
  { additionalProperties: false },
);
export type ListAlertsQuery = Type.Static<typeof ListAlertsQuery>;
