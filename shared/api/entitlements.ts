import Type from 'typebox';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { DIMENSION_LIMITS, KEY_MESSAGE } from '../usage/dimensions.js';
import { ENTITLEMENT_OVERAGES, ENTITLEMENT_PERIODS, ENTITLEMENT_TYPES } from '../vocabulary.js';

/** Entitlements (docs/entitlements.md): what a customer may use of a feature; operators write, customers read their own. */
export const FEATURE_PATTERN = '^[a-z0-9_.-]{1,64}$';
const Feature = Type.String({
  pattern: FEATURE_PATTERN,
  errorMessage: 'must be 1–64 of a-z, 0-9, _ . -',
  description: 'the feature key: 1–64 of a-z 0-9 _ . -',
  examples: ['gpt-4.calls'],
});
const Limit = Type.Number({ minimum: 0, description: 'per period; an exact decimal (at most 9 decimal places)' });
const Period = Type.Enum([...ENTITLEMENT_PERIODS], {
  description:
    'billing_period: the customer’s subscription period (a calendar month; the month without a subscription); month; day (UTC)',
});
const Overage = Type.Enum([...ENTITLEMENT_OVERAGES], {
  description: 'block: has_access false once usage reaches the limit; allow: always true (the balance goes negative)',
});
const Nullable = <T extends object>(t: T) => Type.Union([t as never, Type.Null()]);
/** Issue 46: a metered entitlement of one dimension value's usage (the tokens of model large). */
const DimensionFilter = Type.Object(
  {
    key: Type.String({ pattern: DIMENSION_LIMITS.keyPattern.source, errorMessage: KEY_MESSAGE }),
    value: Type.String({ minLength: 1, maxLength: DIMENSION_LIMITS.maxValueLength }),
  },
  {
    additionalProperties: false,
    description:
      'metered: count only the usage of records whose dimension `key` is `value` (a declared dimension when the meter declares some); absent: the meter’s whole usage',
  },
);
const Decimal = (description: string) => Type.Number({ description: `${description}; an exact decimal` });

export const CreateEntitlementBody = Type.Object(
  {
    customer_id: Type.String({ minLength: 1, maxLength: 64, description: 'cus_… of the customer' }),
    feature: Feature,
    type: Type.Enum([...ENTITLEMENT_TYPES], { description: 'metered: a limit of a meter’s usage; boolean: on/off' }),
    meter_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'metered: the customer’s own meter or a deployment meter',
      }),
    ),
    limit: Type.Optional(Limit),
    period: Type.Optional(Period),
    overage: Type.Optional(Overage),
    dimension: Type.Optional(DimensionFilter),
  },
  { additionalProperties: false },
);
export type CreateEntitlementBody = Type.Static<typeof CreateEntitlementBody>;

export const UpdateEntitlementBody = Type.Object(
  { limit: Type.Optional(Limit), period: Type.Optional(Period), overage: Type.Optional(Overage) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEntitlementBody = Type.Static<typeof UpdateEntitlementBody>;

export const EntitlementSchema = Type.Object(
  {
    id: Type.String({ examples: ['ent_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    customer_id: Type.String(),
    feature: Type.String(),
    type: Type.Enum([...ENTITLEMENT_TYPES]),
    meter_id: Nullable(Type.String()),
    limit: Nullable(Decimal('the limit per period, before grants')),
    period: Nullable(Type.Enum([...ENTITLEMENT_PERIODS])),
    overage: Nullable(Type.Enum([...ENTITLEMENT_OVERAGES])),
    dimension: Type.Optional(DimensionFilter),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const EntitlementListSchema = listOf(EntitlementSchema);

export const ListEntitlementsQuery = Type.Object(
  {
    ...PaginationQuery,
    customer_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'an operator’s list of one customer (cus_…)' }),
    ),
    feature: Type.Optional(Feature),
  },
  { additionalProperties: false },
);
export type ListEntitlementsQuery = Type.Static<typeof ListEntitlementsQuery>;

export const CreateGrantBody = Type.Object(
  {
    amount: Type.Number({ exclusiveMinimum: 0, description: 'added to the current period’s limit; exact decimal' }),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'RFC 3339; no longer counts from then. Absent: the period’s end',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateGrantBody = Type.Static<typeof CreateGrantBody>;

export const GrantSchema = Type.Object(
  {
    id: Type.String({ examples: ['entg_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    entitlement_id: Type.String(),
    amount: Decimal('added to the limit of the period containing granted_at'),
    granted_at: Type.String({ format: 'date-time', description: 'the customer’s time when granted' }),
    expires_at: Nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const CheckEntitlementQuery = Type.Object(
  {
    feature: Feature,
    customer: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'external id or cus_… id; a customer’s own token leaves it out (and may name only itself)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CheckEntitlementQuery = Type.Static<typeof CheckEntitlementQuery>;

export const CheckAnswerSchema = Type.Object(
  {
    feature: Type.String(),
    has_access: Type.Boolean(),
    reason: Type.Optional(Type.Enum(['no_entitlement'], { description: 'present when there is no entitlement' })),
    usage: Nullable(Decimal('the current period’s usage (metered)')),
    limit: Nullable(Decimal('the current period’s limit: the entitlement’s plus its grants (metered)')),
    balance: Nullable(Decimal('limit − usage; negative past the limit (metered)')),
    period_start: Nullable(Type.String({ format: 'date-time' })),
    period_end: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
