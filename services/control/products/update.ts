import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { jsonReply } from '../../../shared/money/json.js';
import { ProductSchema, UpdateProductBody, toProduct } from './schemas.js';
import { checkName, checkPrice, throwIfAny } from './input.js';
import { updateProduct } from './store.js';

const body = bodyValidator<UpdateProductBody>(UpdateProductBody);

/**
 * PATCH /v1/products/:product_id — name and/or price. Currency and pricing are fixed: subscriptions rely on
 * them (one currency per subscription, meters only on metered items).
 */
export function updateProductRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/products/:product_id',
    auth: 'admin',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      if (input.name === undefined && input.price === undefined) throw new ValidationError([{ field: '', message: 'must contain name or price' }]);
      const errors: FieldError[] = [];
      const name = checkName(input.name, errors);
      const price = checkPrice(ctx, input.price !== undefined, errors);
      throwIfAny(errors);
      return jsonReply(200, toProduct(await updateProduct(deps.pg, ctx.params.product_id!, { name, price })));
    },
    doc: {
      summary: 'Update a product’s name or price',
      tags: ['products'],
      requestBody: UpdateProductBody,
      responses: { '200': { description: 'The updated product', schema: ProductSchema } },
    },
  };
}
