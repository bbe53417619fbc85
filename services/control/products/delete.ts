import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { deleteProduct } from '../../domain/products/store.js';

/** DELETE /v1/products/:product_id — 204; 409 product_in_use while an active subscription references it. */
export function deleteProductRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/products/:product_id',
    auth: 'admin',
    handler: async (ctx) => {
      await deleteProduct(deps.pg, ctx.params.product_id!);
      return reply.noContent();
    },
    doc: {
      summary: 'Delete a product',
      tags: ['products'],
      responses: {
        '204': { description: 'Deleted' },
        '409': { description: 'An active subscription uses the product (code product_in_use)' },
      },
    },
  };
}
