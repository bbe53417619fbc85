import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ProductSchema } from '../../../shared/api/products.js';
import { toProduct } from './representation.js';
import { getProduct } from '../../domain/products/store.js';

/** GET /v1/products/:product_id */
export function getProductRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/products/:product_id',
    auth: 'read',
    handler: async (ctx) => reply.ok(toProduct(await getProduct(deps.pg, ctx.params.product_id!))),
    doc: {
      summary: 'Get a product',
      tags: ['products'],
      responses: { '200': { description: 'The product', schema: ProductSchema } },
    },
  };
}
