import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';
import { PRICINGS, TIERS_MODES } from '../vocabulary.js';

const PRICING = PRICINGS;

export const Price = Type.Number({
  minimum: 0,
  description:
    'Unit price, an exact decimal with up to 9 places (read digit for digit from the request, never through a float).',
  examples: [19.99],
});
const Currency = Type.String({
  pattern: CURRENCY_CODE_PATTERN,
  errorMessage: CURRENCY_CODE_MESSAGE,
  description: 'ISO 4217 code, any case; returned upper case.',
  examples: ['USD'],
});
const Name = PrintableText({ maxLength: 200 });
const TaxRateIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 5,
  uniqueItems: true,
  description:
    'the active tax rates (txr_…) the product’s lines are taxed at; empty: the default rates of the customer’s country',
});
const Amount = (description: string) =>
  Type.Number({ minimum: 0, description: `${description}; an exact decimal with up to 9 places` });
export const TiersModeSchema = Type.Enum(TIERS_MODES, {
  description:
    'graduated: each unit at the price of the tier it falls in; volume: every unit at the price of the tier the total falls in',
});
const TierSchema = Type.Object(
  {
    up_to: Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], {
      description: 'last unit of the tier (inclusive); null on the last tier only',
    }),
    unit_price: Amount('price per unit in this tier'),
    flat_price: Type.Optional(Amount('added once when the tier is reached (default 0)')),
  },
  { additionalProperties: false },
);
export const TiersSchema = Type.Array(TierSchema, {
  minItems: 1,
  maxItems: 20,
  description: 'ascending up_to; the last one null',
});
export const PackageSize = Type.Number({
  exclusiveMinimum: 0,
  description: 'units per package; usage is rounded up to whole packages, each at `price`',
});

/** Self-reported usage (issue 49, docs/operator-mode.md): whether a customer's own meter may price this product. */
const AllowCustomerMeters = Type.Boolean({
  description:
    'usage-priced products: true (default) — a subscription item may name a meter of the customer’s own (self-reported usage); false — only a deployment meter',
});

/** Price books (issue 46, docs/plans.md "Price books"): the product's price in other currencies than `currency`. */
export const CurrencyOption = Type.Object(
  {
    price: Type.Optional(Price),
    tiers: Type.Optional(TiersSchema),
  },
  { additionalProperties: false },
);
export const CurrencyOptionsSchema = Type.Record(Type.String(), CurrencyOption, {
  maxProperties: 50,
  description:
    'price books: the price in other currencies than `currency`, keyed by ISO 4217 code (any case; returned upper case) — {"EUR": {"price": 0.018}} for flat, metered and package products (package_size is the product\'s), {"JPY": {"tiers": […]}} for tiered ones (tiers_mode is the product\'s). A customer in one of these currencies is billed this price',
});

export const ProductSchema = Type.Object(
  {
    id: Type.String({ examples: ['prod_2fH9sK1xQ7mV4rT8bN3cJ0'] }),
    name: Type.String(),
    price: Type.Number(),
    currency: Type.String(),
    pricing: Type.Enum(PRICING),
    tiers_mode: Type.Optional(TiersModeSchema),
    tiers: Type.Optional(TiersSchema),
    package_size: Type.Optional(PackageSize),
    currency_options: CurrencyOptionsSchema,
    tax_rate_ids: TaxRateIds,
    allow_customer_meters: AllowCustomerMeters,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const ProductListSchema = listOf(ProductSchema);

export const CreateProductBody = Type.Object(
  {
    name: Name,
    price: Type.Optional(Price),
    currency: Currency,
    pricing: Type.Optional(
      Type.Enum(PRICING, {
        description:
          'flat (price billed in full each period), metered (price per unit of a meter), tiered (tiers, by tiers_mode) or package (price per started package of package_size units); default flat. price is required except for tiered',
      }),
    ),
    tiers_mode: Type.Optional(TiersModeSchema),
    tiers: Type.Optional(TiersSchema),
    package_size: Type.Optional(PackageSize),
    currency_options: Type.Optional(CurrencyOptionsSchema),
    tax_rate_ids: Type.Optional(TaxRateIds),
    allow_customer_meters: Type.Optional(AllowCustomerMeters),
  },
  { additionalProperties: false },
);
export type CreateProductBody = Type.Static<typeof CreateProductBody>;

export const UpdateProductBody = Type.Object(
  {
    name: Type.Optional(Name),
    price: Type.Optional(Price),
    currency_options: Type.Optional(
      Type.Record(Type.String(), CurrencyOption, {
        maxProperties: 50,
        description:
          'adds or replaces the price in each currency given (the others stay; a currency is never removed: subscriptions may bill in it)',
      }),
    ),
    tax_rate_ids: Type.Optional(TaxRateIds),
    allow_customer_meters: Type.Optional(AllowCustomerMeters),
  },
  { additionalProperties: false },
);
export type UpdateProductBody = Type.Static<typeof UpdateProductBody>;

export const ListProductsQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type ListProductsQuery = Type.Static<typeof ListProductsQuery>;
