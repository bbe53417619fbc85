import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { listProductsRoute } from './list.js';
import { getProductRoute } from './get.js';
import { createProductRoute } from './create.js';
import { updateProductRoute } from './update.js';
import { deleteProductRoute } from './delete.js';

/** /v1/products: the catalog. Readable by every token, writable with `admin` (docs/design.md §6). */
export const productsModule: RouteModuleFactory = (deps) => ({
  name: 'products',
  area: 'control',
  register(server) {
    for (const route of [
      listProductsRoute,
      getProductRoute,
      createProductRoute,
      updateProductRoute,
      deleteProductRoute,
    ])
      server.route(route(deps));
  },
});
