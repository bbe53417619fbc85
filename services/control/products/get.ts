import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
import { ProductSchema } from '../../../shared/api/products.js';
import { toProduct } from './representation.js';
import { getProduct } from '../../domain/products/store.js';

/** GET /v1/products/:product_id */
export function getProductRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/products/:product_id',
    auth: 'read',
    // From the process's cache (shared/read-cache.ts): the hottest control-plane read.
    handler: (ctx) => {
      const id = ctx.params.product_id!;
      return okFromCache(deps.reads.of('products'), id, async () => toProduct(await getProduct(deps.pg, id)));
    },
    doc: {
      summary: 'Get a product',
      tags: ['products'],
      responses: { '200': { description: 'The product', schema: ProductSchema } },
    },
  };
}
