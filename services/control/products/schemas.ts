import Type from 'typebox';
import { PaginationQuery, listOf } from '../../../shared/http/pagination.js';
import { JsonDecimal } from '../../../shared/money/json.js';

export const PRICING = ['flat', 'metered'] as const;
export type Pricing = (typeof PRICING)[number];

const Price = Type.Number({
  minimum: 0,
  description: 'Unit price, an exact decimal with up to 9 places (read digit for digit from the request, never through a float).',
  examples: [19.99],
});
const Currency = Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code, any case; returned upper case.', examples: ['USD'] });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const ProductSchema = Type.Object(
  {
    id: Type.String({ examples: ['prod_2fH9sK1xQ7mV4rT8bN3cJ0'] }),
    name: Type.String(),
    price: Type.Number(),
    currency: Type.String(),
    pricing: Type.Enum(PRICING),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const ProductListSchema = listOf(ProductSchema);

export const CreateProductBody = Type.Object(
  {
    name: Name,
    price: Price,
    currency: Currency,
    pricing: Type.Optional(Type.Enum(PRICING, { description: 'flat (billed in full each period) or metered (price per unit of a meter); default flat' })),
  },
  { additionalProperties: false },
);
export type CreateProductBody = Type.Static<typeof CreateProductBody>;

export const UpdateProductBody = Type.Object({ name: Type.Optional(Name), price: Type.Optional(Price) }, { additionalProperties: false });
export type UpdateProductBody = Type.Static<typeof UpdateProductBody>;

export const ListProductsQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type ListProductsQuery = Type.Static<typeof ListProductsQuery>;

export interface NewProduct {
  name: string;
  /** Exact decimal text, as the client wrote it. */
  price: string;
  currency: string;
  pricing: Pricing;
}

export interface ProductChange {
  name?: string;
  price?: string;
}

export interface ProductRow {
  id: string;
  name: string;
  /** NUMERIC as text: exact. */
  price: string;
  currency: string;
  pricing: Pricing;
  created_at: Date;
  updated_at: Date;
}

export const PRODUCT_COLUMNS = 'id, name, price::text AS price, currency, pricing, created_at, updated_at';

/** The API representation; `price` is written as a JSON number from its exact decimal text. */
export function toProduct(row: ProductRow) {
  return {
    id: row.id,
    name: row.name,
    price: new JsonDecimal(row.price),
    currency: row.currency,
    pricing: row.pricing,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
