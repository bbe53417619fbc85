import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, PaginationSchema, listOf } from '../http/pagination.js';
import { BILLING_INTERVALS, PLAN_MIGRATION_TIMINGS } from '../vocabulary.js';
import { DimensionPricesSchema, PlanItemInput } from './subscriptions.js';

/** Plans and their versions (docs/plans.md): the deployment's catalog bundles; admin writes, everyone reads. */
const Name = PrintableText({ maxLength: 200, description: 'shown to customers' });
const Currency = Type.String({
  pattern: '^[A-Za-z]{3}$',
  description: 'ISO 4217, any case; every item’s product is in it. The same for every version',
  examples: ['USD'],
});
const Interval = Type.Enum([...BILLING_INTERVALS], { description: 'the unit of a billing period' });
const IntervalCount = (extra: object = {}) =>
  Type.Integer({ minimum: 1, maximum: 12, description: 'periods are this many intervals', ...extra });
const TrialDays = (extra: object = {}) =>
  Type.Integer({ minimum: 0, maximum: 3650, description: 'days of trial a subscription starts with', ...extra });
const Items = Type.Array(PlanItemInput, {
  minItems: 1,
  maxItems: 50,
  description:
    'what a subscription to this version gets, as a subscription’s items: products of the plan’s currency; each usage-priced one with a deployment meter',
});

const PlanItemSchema = Type.Object(
  {
    product_id: Type.String(),
    meter_id: Type.Union([Type.String(), Type.Null()]),
    minimum_amount: Type.Optional(Type.Number({ description: 'minimum commitment per period, when set' })),
    group_by: Type.Optional(Type.Array(Type.String(), { description: 'dimension keys billed per group, when set' })),
    ...DimensionPricesSchema,
    currency_options: Type.Optional(
      Type.Record(Type.String(), Type.Object({ minimum_amount: Type.Number() }), {
        description: 'price books: minimum_amount in other currencies than the plan’s, when it has some',
      }),
    ),
    quantity: Type.Optional(Type.Integer({ description: 'units of a flat product, when not 1' })),
  },
  { additionalProperties: false },
);

export const PlanSchema = Type.Object(
  {
    id: Type.String({ description: 'plan_…', examples: ['plan_7hK2sP9xR1mV4rT8bN3cJ0'] }),
    name: Type.String(),
    currency: Type.String(),
    interval: Interval,
    interval_count: Type.Integer(),
    version: Type.Integer({ description: 'this version’s number (1, 2, …); a version never changes' }),
    items: Type.Array(PlanItemSchema),
    trial_days: Type.Integer(),
    created_at: Type.String({ format: 'date-time', description: 'when this version was made' }),
  },
  { additionalProperties: false },
);
export const PlanListSchema = listOf(PlanSchema);

export const CreatePlanBody = Type.Object(
  {
    name: Name,
    currency: Currency,
    interval: Interval,
    interval_count: Type.Optional(IntervalCount({ default: 1 })),
    items: Items,
    trial_days: Type.Optional(TrialDays({ default: 0 })),
  },
  { additionalProperties: false },
);
export type CreatePlanBody = Type.Static<typeof CreatePlanBody>;

/** A new version: the latest one with these fields changed (at least one). */
export const CreatePlanVersionBody = Type.Object(
  {
    name: Type.Optional(Name),
    interval: Type.Optional(Interval),
    interval_count: Type.Optional(IntervalCount()),
    items: Type.Optional(Items),
    trial_days: Type.Optional(TrialDays()),
  },
  { additionalProperties: false },
);
export type CreatePlanVersionBody = Type.Static<typeof CreatePlanVersionBody>;

export const ListPlansQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type ListPlansQuery = Type.Static<typeof ListPlansQuery>;

export const GetPlanQuery = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'default: the latest' })) },
  { additionalProperties: false },
);
export type GetPlanQuery = Type.Static<typeof GetPlanQuery>;

export const MigratePlanBody = Type.Object(
  {
    from_version: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'subscriptions on this version…' }),
    to_version: Type.Integer({ minimum: 1, maximum: 1_000_000, description: '…move to this one' }),
    at: Type.Enum([...PLAN_MIGRATION_TIMINGS], {
      description: 'now: at once, pro-rated as an items change; period_end: at the end of each one’s current period',
    }),
    dry_run: Type.Boolean({ description: 'true: change nothing, preview the upcoming invoices before and after' }),
  },
  { additionalProperties: false },
);
export type MigratePlanBody = Type.Static<typeof MigratePlanBody>;
export const MigratePlanQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type MigratePlanQuery = Type.Static<typeof MigratePlanQuery>;

export const PlanMigrationSchema = Type.Object(
  {
    subscriptions: Type.Integer({
      description:
        'dry run: the active subscriptions on from_version; applied: the subscriptions this request moved (or scheduled)',
    }),
    preview: Type.Array(
      Type.Object(
        {
          subscription_id: Type.String(),
          upcoming_amount_before: Type.Number({ description: 'the upcoming invoice’s amount now' }),
          upcoming_amount_after: Type.Number({ description: 'the upcoming invoice’s amount once moved' }),
        },
        { additionalProperties: false },
      ),
      { description: 'dry run: this page of the subscriptions; applied: empty' },
    ),
    pagination: PaginationSchema,
  },
  { additionalProperties: false },
);
