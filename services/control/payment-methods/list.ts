import Type from 'typebox';
import type { RouteDef } from '../../../shared/http/route.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { PaginationQuery, listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PaymentMethodSchema } from './schemas.js';
import { listPaymentMethods } from './store.js';

const ListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
const query = queryValidator<Type.Static<typeof ListQuery>>(ListQuery);

export function listPaymentMethodsRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods',
    auth: 'read',
    input: (ctx) => query.parseQuery(ctx.query),
    handler: async (ctx, page) => {
      const { data, total } = await listPaymentMethods(deps.pg, ctx.principal!.accountId, pageWindow(page));
      return reply.page(data, page, total);
    },
    doc: {
      summary: "List the account's payment methods, newest first",
      tags: ['payment methods'],
      query: ListQuery,
      responses: { '200': { description: 'a page of payment methods', schema: listOf(PaymentMethodSchema) } },
    },
  };
}
