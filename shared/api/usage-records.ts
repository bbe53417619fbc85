import Type from 'typebox';
import { DIMENSION_LIMITS } from '../usage/dimensions.js';
import { USAGE_LIMITS } from '../usage/limits.js';
import { TIMESTAMP_FORMAT_MESSAGE } from '../usage/timestamp.js';

const Value = Type.Number({ description: 'finite; counters ≥ 0; at most 9 decimal places; |value| ≤ 1e18' });
const Timestamp = Type.String({
  errorMessage: TIMESTAMP_FORMAT_MESSAGE,
  description: 'RFC 3339 date-time with an offset, within [now − 35 days, now + 5 min]',
});
const RecordId = Type.String({
  minLength: 1,
  maxLength: USAGE_LIMITS.maxRecordIdLength,
  description:
    'idempotency key: a record re-sent with the same id, meter and timestamp is counted once; assigned (use_…) when omitted',
});

const Dimensions = Type.Record(
  Type.String(),
  Type.String({ minLength: 1, maxLength: DIMENSION_LIMITS.maxValueLength }),
  {
    maxProperties: DIMENSION_LIMITS.maxKeys,
    description: `string key → string value, e.g. {"model": "gpt-x"}: at most ${DIMENSION_LIMITS.maxKeys} keys of ${DIMENSION_LIMITS.keyDescription}, values 1–${DIMENSION_LIMITS.maxValueLength} characters; a meter declaring dimensions accepts only those keys`,
  },
);

export const MAX_CUSTOMER_ID_LENGTH = 64;
/** Operator mode (docs/design.md §6): who a record of a deployment meter is for. */
const Customer = Type.String({
  minLength: 1,
  maxLength: 128,
  description:
    'deployment meters: the customer’s external_id — required with an admin token (or customer_id); a customer’s own token may name only itself',
});
const CustomerId = Type.String({
  minLength: 1,
  maxLength: MAX_CUSTOMER_ID_LENGTH,
  description: 'deployment meters: the customer’s id (cus_…), instead of customer',
});

/** One record of POST /v1/meters/{meter_id}/usage. */
export const UsageRecordBody = Type.Object(
  {
    value: Value,
    timestamp: Timestamp,
    id: Type.Optional(RecordId),
    dimensions: Type.Optional(Dimensions),
    customer: Type.Optional(Customer),
    customer_id: Type.Optional(CustomerId),
  },
  { additionalProperties: false },
);

export const MAX_METER_ID_LENGTH = 64;

/** One record of POST /v1/usage (batch across meters). */
export const MeterUsageRecordBody = Type.Object(
  {
    meter_id: Type.String({ minLength: 1, maxLength: MAX_METER_ID_LENGTH }),
    value: Value,
    timestamp: Timestamp,
    id: Type.Optional(RecordId),
    dimensions: Type.Optional(Dimensions),
    customer: Type.Optional(Customer),
    customer_id: Type.Optional(CustomerId),
  },
  { additionalProperties: false },
);

/** A CloudEvent of POST /v1/usage (structured mode; services/ingress/cloudevents.ts says how it maps to a record). */
export const CloudEventSchema = Type.Object(
  {
    specversion: Type.Literal('1.0'),
    id: Type.String({
      minLength: 1,
      description: 'with source: the record id (ce_ + SHA-256), so a resent event counts once',
    }),
    source: Type.String({ minLength: 1 }),
    type: Type.String({
      minLength: 1,
      description: 'the meter: its id, or its name if no other meter of the account has it',
    }),
    time: Timestamp,
    subject: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'deployment meters: the customer’s external_id (as OpenMeter’s subject); required with an admin token',
      }),
    ),
    datacontenttype: Type.Optional(Type.Literal('application/json')),
    data: Type.Object(
      { value: Value },
      {
        additionalProperties: Type.String({ minLength: 1, maxLength: DIMENSION_LIMITS.maxValueLength }),
        description: 'value, and dimensions as further string fields',
      },
    ),
  },
  { additionalProperties: true, description: 'extension attributes are accepted and ignored' },
);

export const UsageBatchBody = (record: object) =>
  Type.Array(record as never, {
    minItems: 1,
    maxItems: USAGE_LIMITS.maxBatchRecords,
    description: `1 to ${USAGE_LIMITS.maxBatchRecords} records`,
  });

export const AcceptedUsageSchema = Type.Object(
  {
    id: Type.String(),
    meter_id: Type.String(),
    value: Type.Number(),
    timestamp: Type.String({ format: 'date-time' }),
    received_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const BatchResultSchema = Type.Object(
  {
    accepted: Type.Integer(),
    rejected: Type.Integer(),
    results: Type.Array(
      Type.Object({
        index: Type.Integer(),
        status: Type.Enum(['accepted', 'rejected']),
        id: Type.Optional(Type.String()),
        error: Type.Optional(
          Type.Object({
            code: Type.String({
              description:
                'validation_failed, value_out_of_range, not_found, meter_inactive, unknown_customer, operator_reported_meter (a customer’s token on a deployment gauge or histogram) or rate_limited',
            }),
            detail: Type.String(),
            errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
          }),
        ),
      }),
    ),
  },
  { additionalProperties: false },
);
