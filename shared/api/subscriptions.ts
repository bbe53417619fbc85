import Type from 'typebox';
import { CouponIdInput, DiscountSchema } from './coupons.js';
import { PROMOTION_CODE_PATTERN } from './promotion-codes.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { MAX_GROUP_BY } from './usage.js';
import { DIMENSION_LIMITS, KEY_MESSAGE } from '../usage/dimensions.js';
import { BILLING_ANCHORS, BILLING_INTERVALS } from '../vocabulary.js';
import { CurrencyOption, PackageSize, Price, TiersModeSchema, TiersSchema } from './products.js';

/** Billing periods (docs/billing.md "Billing periods"): on creation, and in the representation. */
const Interval = Type.Enum([...BILLING_INTERVALS], { description: 'the billing interval; default month' });
const IntervalCount = Type.Integer({
  minimum: 1,
  maximum: 12,
  description: 'intervals per billing period (1–12); default 1',
});
const BillingAnchor = Type.Enum([...BILLING_ANCHORS], {
  description:
    'calendar (default): whole calendar intervals in UTC (ISO weeks from Monday; quarters and years from 1 January), the first one containing the start, flat items in full; start: anniversary billing from the start’s day (the 31st renews on the last day of shorter months)',
});

export const SubscriptionStatus = Type.Enum(['active', 'canceled']);
const Status = SubscriptionStatus;

/** Billing per group (issue 18): at most MAX_GROUP_BY keys, as GET …/usage's group_by takes them. */
const GroupBy = Type.Array(
  Type.String({
    pattern: DIMENSION_LIMITS.keyPattern.source,
    errorMessage: KEY_MESSAGE,
    description: 'a dimension key',
  }),
  {
    maxItems: MAX_GROUP_BY,
    uniqueItems: true,
    description: `usage-priced items only: dimension keys (at most ${MAX_GROUP_BY}; declared dimensions of the meter when it declares some) to bill the usage by — one usage line per group of values, each priced by the product's model on its own (tiers and packages per group); not with minimum_amount`,
  },
);

/** Per-dimension prices (issue 46, docs/billing.md "Per-dimension prices"): a usage price model of one value. */
const PriceModelProperties = {
  pricing: Type.Enum(['metered', 'tiered', 'package'], {
    description:
      'metered (price per unit), tiered (tiers, by tiers_mode) or package (price per started package of package_size units)',
  }),
  price: Type.Optional(Price),
  tiers_mode: Type.Optional(TiersModeSchema),
  tiers: Type.Optional(TiersSchema),
  package_size: Type.Optional(PackageSize),
};
export const PriceModelInput = Type.Object(PriceModelProperties, {
  additionalProperties: false,
  description: 'a price model, as a product’s (in the subscription’s currency)',
});
export type PriceModelInput = Type.Static<typeof PriceModelInput>;

/** Price books (docs/plans.md "Price books"): a plan item's per-dimension price in other currencies, as a product's. */
const ModelCurrencyOptions = {
  currency_options: Type.Optional(
    Type.Record(Type.String(), CurrencyOption, {
      maxProperties: 50,
      description:
        'price books: this price in other currencies than the plan’s, keyed by ISO 4217 code, as a product’s currency_options ({"EUR": {"price": 0.028}}, or {"JPY": {"tiers": […]}} for a tiered model; package_size and tiers_mode are the model’s)',
    }),
  ),
};
export const PlanPriceModelInput = Type.Object(
  { ...PriceModelProperties, ...ModelCurrencyOptions },
  { additionalProperties: false, description: 'a price model, as a product’s (in the plan’s currency, and its books)' },
);
export type PlanPriceModelInput = Type.Static<typeof PlanPriceModelInput>;

const DimensionValue = Type.String({
  minLength: 1,
  maxLength: DIMENSION_LIMITS.maxValueLength,
  description: 'a value of the dimension, as records carry it',
});

const Dimension = Type.Optional(
  Type.String({
    pattern: DIMENSION_LIMITS.keyPattern.source,
    errorMessage: KEY_MESSAGE,
    description:
      'per-dimension prices: the dimension key (a declared one when the meter declares some) whose value chooses the price; one usage line per value; requires prices; not with group_by or minimum_amount',
  }),
);
const DimensionPricesInput = {
  dimension: Dimension,
  prices: Type.Optional(
    Type.Array(Type.Object({ value: DimensionValue, price: PriceModelInput }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 100,
      description: 'per-dimension prices: the price of each value (each value once)',
    }),
  ),
  default_price: Type.Optional(
    Type.Union([PriceModelInput, Type.Null()], {
      description:
        'per-dimension prices: the price of values not in prices and of records without the dimension; absent or null: their usage is billed on a line marked unpriced, at 0',
    }),
  ),
};
/** A plan item's per-dimension prices: each model may carry its price books. */
const PlanDimensionPricesInput = {
  dimension: Dimension,
  prices: Type.Optional(
    Type.Array(Type.Object({ value: DimensionValue, price: PlanPriceModelInput }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 100,
      description: 'per-dimension prices: the price of each value (each value once), with its books',
    }),
  ),
  default_price: Type.Optional(
    Type.Union([PlanPriceModelInput, Type.Null()], {
      description:
        'per-dimension prices: the price of values not in prices and of records without the dimension, with its books; absent or null: their usage is billed on a line marked unpriced, at 0',
    }),
  ),
};

/** A price model as an item shows it (per-dimension prices). */
const PriceModelSchema = Type.Object(
  {
    pricing: Type.Enum(['metered', 'tiered', 'package']),
    price: Type.Optional(Type.Number()),
    tiers_mode: Type.Optional(TiersModeSchema),
    tiers: Type.Optional(TiersSchema),
    package_size: Type.Optional(Type.Number()),
    currency_options: Type.Optional(
      Type.Record(Type.String(), CurrencyOption, {
        description: 'a plan item’s price books: this price in other currencies than the plan’s, when it has some',
      }),
    ),
  },
  { additionalProperties: false },
);
export const DimensionPricesSchema = {
  dimension: Type.Optional(Type.String({ description: 'per-dimension prices: the dimension key, when set' })),
  prices: Type.Optional(
    Type.Array(Type.Object({ value: Type.String(), price: PriceModelSchema }, { additionalProperties: false }), {
      description: 'per-dimension prices: each value’s price model',
    }),
  ),
  default_price: Type.Optional(
    Type.Union([PriceModelSchema, Type.Null()], {
      description: 'per-dimension prices: other values’ price model; null: their usage is billed as unpriced, at 0',
    }),
  ),
};

const ItemProperties = {
  product_id: Type.String({ minLength: 1, maxLength: 64 }),
  meter_id: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
      description: 'required for metered, tiered and package products, null/absent for flat ones',
    }),
  ),
  minimum_amount: Type.Optional(
    Type.Number({
      minimum: 0,
      description:
        'minimum commitment per period (usage-priced items only): usage priced below it is trued up to it on the invoice; an exact decimal',
    }),
  ),
  group_by: Type.Optional(GroupBy),
  quantity: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'units of a flat product (seats), billed quantity × price per period; default 1',
    }),
  ),
};
export const ItemInput = Type.Object({ ...ItemProperties, ...DimensionPricesInput }, { additionalProperties: false });
export type ItemInput = Type.Static<typeof ItemInput>;

/** A plan item's minimum in other currencies than the plan's (price books), as a coupon's amount_off. */
export const MinimumCurrencyOptions = Type.Record(
  Type.String(),
  Type.Object(
    { minimum_amount: Type.Number({ minimum: 0, description: 'exact, at most that currency’s minor unit decimals' }) },
    { additionalProperties: false },
  ),
  {
    maxProperties: 50,
    description:
      'price books: minimum_amount in other currencies than the plan’s, keyed by ISO 4217 code (any case; shown upper case) — {"EUR": {"minimum_amount": 45}, "JPY": {"minimum_amount": 7500}}, each exact to that currency’s minor unit; requires minimum_amount. A subscriber in one of these currencies is held to that minimum',
  },
);

/** A plan version's item: a subscription's item, whose amounts (minimum, per-dimension prices) may have price books. */
export const PlanItemInput = Type.Object(
  { ...ItemProperties, ...PlanDimensionPricesInput, currency_options: Type.Optional(MinimumCurrencyOptions) },
  { additionalProperties: false },
);
export type PlanItemInput = Type.Static<typeof PlanItemInput>;
const Items = Type.Array(ItemInput, {
  minItems: 1,
  maxItems: 50,
  description: 'products of one currency; each metered product with a meter of this account',
});

/** Progressive billing (docs/billing.md): null or absent = none. */
const BillingThresholdInput = Type.Union(
  [
    Type.Object(
      {
        amount: Type.Number({
          description:
            'greater than 0, in the subscription’s currency, at most its minor unit’s decimals: when the running period’s amount due reaches it, an invoice for the amount so far is issued and charged at once (reason threshold)',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'progressive billing: bill the period early each time its amount not yet billed reaches this; null removes it',
  },
);

/** An item as the representation and `subscription.updated` show it (services/domain/subscriptions/types.ts itemOut). */
export const SubscriptionItemSchema = Type.Object(
  {
    product_id: Type.String(),
    meter_id: Type.Union([Type.String(), Type.Null()]),
    minimum_amount: Type.Optional(Type.Number({ description: 'minimum commitment per period, when set' })),
    group_by: Type.Optional(
      Type.Array(Type.String(), {
        description: 'dimension keys the usage is billed by (one line per group), when set',
      }),
    ),
    ...DimensionPricesSchema,
    quantity: Type.Optional(Type.Integer({ description: 'units of a flat product, when not 1' })),
  },
  { additionalProperties: false },
);

export const SubscriptionSchema = Type.Object(
  {
    id: Type.String({ examples: ['sub_7hK2sP9xR1mV4rT8bN3cJ0'] }),
    customer_id: Type.String({ description: 'cus_… of the customer subscribed (the account’s own)' }),
    status: Status,
    items: Type.Array(SubscriptionItemSchema),
    currency: Type.String(),
    billing_threshold: Type.Union([Type.Object({ amount: Type.Number() }), Type.Null()], {
      description: 'progressive billing: the amount due that issues a threshold invoice, or null',
    }),
    plan_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the plan its items came from (plan_…); null: subscribed to items, or items changed since',
    }),
    plan_version: Type.Union([Type.Integer(), Type.Null()], { description: 'that plan’s version' }),
    interval: Interval,
    interval_count: IntervalCount,
    billing_anchor: BillingAnchor,
    trial_end: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'the end of the trial: nothing is billed before it; null: no trial',
    }),
    current_period_start: Type.String({ format: 'date-time' }),
    current_period_end: Type.String({ format: 'date-time' }),
    scheduled_plan_change: Type.Union(
      [
        Type.Object({
          plan_id: Type.String({
            description: 'the plan it moves to: its own (a migration) or another (a downgrade, POST …/plan_change)',
          }),
          plan_version: Type.Integer({ description: 'the version of that plan it moves to' }),
          at: Type.String({ format: 'date-time', description: 'when: the end of its current period' }),
        }),
        Type.Null(),
      ],
      {
        description:
          'a move to another plan version at the period’s end (POST /v1/plans/{id}/migrate at: period_end, or a downgrade by POST /v1/subscriptions/{id}/plan_change), applied by the billing run; null: none',
      },
    ),
    pause_collection: Type.Union(
      [Type.Object({ behavior: Type.Enum(['void']), paused_at: Type.String({ format: 'date-time' }) }), Type.Null()],
      { description: 'invoicing paused since paused_at: periods ending meanwhile are not invoiced; null: not paused' },
    ),
    cancel_at_period_end: Type.Boolean({
      description: 'true: the subscription cancels at cancel_at, the end of its current period',
    }),
    cancel_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when a scheduled cancellation takes effect; null: none scheduled',
    }),
    canceled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when it was canceled (its last period ends there); null: active',
    }),
    created_at: Type.String({ format: 'date-time' }),
    managed_by: Type.Enum(['operator', 'customer'], {
      description:
        'operator: made by the operator (admin) — its items, status and threshold change only through the operator, or as far as portal settings let the customer; customer: subscribed by the customer itself',
    }),
    discount: DiscountSchema,
  },
  { additionalProperties: false },
);
export const SubscriptionListSchema = listOf(SubscriptionSchema);

export const CreateSubscriptionBody = Type.Object(
  {
    items: Type.Optional(Items),
    plan_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'subscribe to a plan (plan_…): its version’s items; instead of items',
      }),
    ),
    plan_version: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'with plan_id: that version (default the latest)' }),
    ),
    billing_threshold: Type.Optional(BillingThresholdInput),
    coupon_id: Type.Optional(CouponIdInput),
    interval: Type.Optional(Interval),
    interval_count: Type.Optional(IntervalCount),
    billing_anchor: Type.Optional(BillingAnchor),
    trial_end: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'a trial until this instant (after now): nothing charged and no invoice before it, usage during it not billed; the first period is the one containing it',
      }),
    ),
    trial_days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 730,
        description: 'a trial of this many days from now (trial_end = now + days); not with trial_end',
      }),
    ),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): the customer (cus_…) subscribed; default the caller’s own account',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSubscriptionBody = Type.Static<typeof CreateSubscriptionBody>;

export const UpdateSubscriptionBody = Type.Object(
  {
    items: Type.Optional(Items),
    status: Type.Optional(Type.Enum(['canceled'], { description: 'cancels the subscription (final)' })),
    cancel_at_period_end: Type.Optional(
      Type.Boolean({
        description:
          'true: cancel at the end of the current period (after its invoice); false: undo that. A customer on the operator’s subscription needs portal setting customer_can_cancel',
      }),
    ),
    pause_collection: Type.Optional(
      Type.Union(
        [
          Type.Object(
            { behavior: Type.Enum(['void'], { description: 'periods ending while paused are not invoiced' }) },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        {
          description:
            'pause invoicing from now (usage is still recorded); null resumes it. A customer on the operator’s subscription needs portal setting customer_can_cancel',
        },
      ),
    ),
    billing_threshold: Type.Optional(BillingThresholdInput),
    coupon_id: Type.Optional(CouponIdInput),
    promotion_code: Type.Optional(
      Type.String({
        pattern: PROMOTION_CODE_PATTERN,
        errorMessage: 'letters, digits, "-" or "_"',
        description:
          'a promotion code (docs/checkout.md) the customer — or the operator for it — redeems: its coupon replaces the subscription’s from the current period on, as coupon_id does; not with coupon_id',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateSubscriptionBody = Type.Static<typeof UpdateSubscriptionBody>;

export const ListSubscriptionsQuery = Type.Object(
  {
    ...PaginationQuery,
    status: Type.Optional(Status),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): that customer’s subscriptions; any other token may name only itself',
      }),
    ),
    scope: Type.Optional(
      Type.Literal('deployment', {
        description:
          'operators (admin): every customer’s subscriptions at once (customer_id narrows it); any other token → 403',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListSubscriptionsQuery = Type.Static<typeof ListSubscriptionsQuery>;

/** POST /v1/subscriptions/{id}/plan_change (docs/plans.md "Changing a subscription's plan") */
export const PlanChangeBody = Type.Object(
  {
    plan_id: Type.String({ minLength: 1, maxLength: 64, description: 'the plan to move to (plan_…)' }),
    plan_version: Type.Optional(Type.Integer({ minimum: 1, description: 'its version; default the latest' })),
    at: Type.Optional(
      Type.Enum(['now', 'period_end'], {
        description:
          'now: pro-rated from this instant; period_end: scheduled (scheduled_plan_change), applied by the billing run. Default: now when the plan bills more per period (an upgrade), else period_end',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PlanChangeBody = Type.Static<typeof PlanChangeBody>;
