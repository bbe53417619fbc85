import Type from 'typebox';
import { PaginationQuery, listOf } from '../../../shared/http/pagination.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../../../shared/money/currencies.js';
import { priceModelOf, type ProductPriceRow } from '../../billing/pricing.js';
import { PRICINGS, TIERS_MODES, type Pricing, type Tier, type TiersMode } from '../../billing/price-models.js';

const PRICING = PRICINGS;

const Price = Type.Number({
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
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Amount = (description: string) =>
  Type.Number({ minimum: 0, description: `${description}; an exact decimal with up to 9 places` });
const TiersModeSchema = Type.Enum(TIERS_MODES, {
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
const TiersSchema = Type.Array(TierSchema, {
  minItems: 1,
  maxItems: 20,
  description: 'ascending up_to; the last one null',
});
const PackageSize = Type.Number({
  exclusiveMinimum: 0,
  description: 'units per package; usage is rounded up to whole packages, each at `price`',
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
  },
  { additionalProperties: false },
);
export type CreateProductBody = Type.Static<typeof CreateProductBody>;

export const UpdateProductBody = Type.Object(
  { name: Type.Optional(Name), price: Type.Optional(Price) },
  { additionalProperties: false },
);
export type UpdateProductBody = Type.Static<typeof UpdateProductBody>;

export const ListProductsQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type ListProductsQuery = Type.Static<typeof ListProductsQuery>;

export interface NewProduct {
  name: string;
  /** Exact decimal text, as the client wrote it ("0" for tiered products: the tiers carry the prices). */
  price: string;
  currency: string;
  pricing: Pricing;
  tiers_mode?: TiersMode;
  tiers?: Tier[];
  package_size?: string;
}

export interface ProductChange {
  name?: string;
  price?: string;
}

export interface ProductRow extends ProductPriceRow {
  id: string;
  name: string;
  /** NUMERIC as text: exact. */
  price: string;
  currency: string;
  pricing: Pricing;
  created_at: Date;
  updated_at: Date;
}

export const PRODUCT_COLUMNS =
  'id, name, price::text AS price, currency, pricing, tiers_mode, tiers, package_size::text AS package_size, created_at, updated_at';

/** The API representation; `price` is written as a JSON number from its exact decimal text. */
export function toProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    price: new JsonDecimal(row.price),
    currency: row.currency,
    pricing: row.pricing,
    ...priceModelFields(row),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The fields of a tiered or package product's model, as exact JSON numbers (none for flat and metered). */
function priceModelFields(row: ProductRow) {
  const model = priceModelOf(row);
  if (model.pricing === 'package') return { package_size: new JsonDecimal(model.package_size) };
  if (model.pricing !== 'tiered') return {};
  return {
    tiers_mode: model.tiers_mode,
    tiers: model.tiers.map((t) => ({
      up_to: t.up_to === null ? null : new JsonDecimal(t.up_to),
      unit_price: new JsonDecimal(t.unit_price),
      flat_price: new JsonDecimal(t.flat_price),
    })),
  };
}
