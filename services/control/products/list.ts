import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListProductsQuery, ProductListSchema } from '../../../shared/api/products.js';
import { toProduct } from './representation.js';
import { parseListProducts } from './input.js';
import { listProducts } from '../../domain/products/store.js';

/** GET /v1/products — the catalog, newest first; every token may read it. */
export function listProductsRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/products',
    auth: 'read',
    input: parseListProducts,
    handler: async (_ctx, page) => {
      const { rows, total } = await listProducts(deps.pg, pageWindow(page));
      return reply.page(rows.map(toProduct), page, total);
    },
    doc: {
      summary: 'List products (newest first)',
      tags: ['products'],
      query: ListProductsQuery,
      responses: { '200': { description: 'A page of products', schema: ProductListSchema } },
    },
  };
}
