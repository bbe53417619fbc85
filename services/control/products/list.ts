import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { pageOf } from '../../../shared/http/pagination.js';
import { jsonReply } from '../../../shared/money/json.js';
import { ListProductsQuery, ProductListSchema, toProduct } from './schemas.js';
import { listProducts } from './store.js';

const query = queryValidator<ListProductsQuery>(ListProductsQuery);

/** GET /v1/products — the catalog, newest first; every token may read it. */
export function listProductsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/products',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const { rows, total } = await listProducts(deps.pg, q.page, q.per_page);
      return jsonReply(200, pageOf(rows.map(toProduct), q.page, q.per_page, total));
    },
    doc: {
      summary: 'List products (newest first)',
      tags: ['products'],
      query: ListProductsQuery,
      responses: { '200': { description: 'A page of products', schema: ProductListSchema } },
    },
  };
}
