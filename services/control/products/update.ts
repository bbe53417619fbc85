import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ProductSchema, UpdateProductBody } from '../../../shared/api/products.js';
import { toProduct } from './representation.js';
import type { ProductChange } from '../../domain/products/types.js';
import { parseProductChange } from './input.js';
import { updateProduct } from '../../domain/products/store.js';

/**
 * PATCH /v1/products/:product_id — name and/or price. Currency and pricing are fixed: subscriptions rely on
 * them (one currency per subscription, meters only on metered items).
 */
export function updateProductRoute(deps: ApiDeps): RouteDef<ProductChange> {
  return {
    method: 'PATCH',
    path: '/v1/products/:product_id',
    auth: 'admin',
    input: parseProductChange,
    handler: async (ctx, change) => reply.ok(toProduct(await updateProduct(deps.pg, ctx.params.product_id!, change))),
    doc: {
      summary: 'Update a product’s name or price',
      tags: ['products'],
      requestBody: UpdateProductBody,
      responses: { '200': { description: 'The updated product', schema: ProductSchema } },
    },
  };
}
