import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateProductBody, ProductSchema } from '../../../shared/api/products.js';
import { toProduct } from './representation.js';
import type { NewProduct } from '../../domain/products/types.js';
import { parseNewProduct } from './input.js';
import { insertProduct } from '../../domain/products/store.js';

/** POST /v1/products — admin only: products are the deployment's catalog. */
export function createProductRoute(deps: ApiDeps): RouteDef<NewProduct> {
  return {
    method: 'POST',
    path: '/v1/products',
    auth: 'admin',
    input: parseNewProduct,
    handler: async (_ctx, product) => {
      const row = await insertProduct(deps.pg, product);
      return reply.created(toProduct(row), `/v1/products/${row.id}`);
    },
    doc: {
      summary: 'Create a product',
      tags: ['products'],
      requestBody: CreateProductBody,
      responses: { '201': { description: 'The created product (Location names it)', schema: ProductSchema } },
    },
  };
}
