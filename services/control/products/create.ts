import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import type { FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { jsonReply } from '../../../shared/money/json.js';
import { CreateProductBody, ProductSchema, toProduct } from './schemas.js';
import { checkCurrency, checkName, checkPrice, throwIfAny } from './input.js';
import { insertProduct } from './store.js';

const body = bodyValidator<CreateProductBody>(CreateProductBody);

/** POST /v1/products — admin only: products are the deployment's catalog. */
export function createProductRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/products',
    auth: 'admin',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      const errors: FieldError[] = [];
      const name = checkName(input.name, errors)!;
      const price = checkPrice(ctx, true, errors)!;
      const currency = checkCurrency(input.currency, errors);
      throwIfAny(errors);
      const row = await insertProduct(deps.pg, { name, price, currency, pricing: input.pricing ?? 'flat' });
      return jsonReply(201, toProduct(row), { Location: `/v1/products/${row.id}` });
    },
    doc: {
      summary: 'Create a product',
      tags: ['products'],
      requestBody: CreateProductBody,
      responses: { '201': { description: 'The created product (Location names it)', schema: ProductSchema } },
    },
  };
}
