import Type from 'typebox';
import type { RouteDef } from '../../../shared/http/server.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { PaginationQuery, limitOffset, listOf, pageOf } from '../../../shared/http/pagination.js';
import type { ApiDeps } from '../../api/modules.js';
import { PaymentMethodSchema } from './schemas.js';
import { listPaymentMethods } from './store.js';

const ListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
const query = queryValidator<Type.Static<typeof ListQuery>>(ListQuery);

export function listPaymentMethodsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const [limit, offset] = limitOffset(q.page, q.per_page);
      const { data, total } = await listPaymentMethods(deps.pg, ctx.principal!.accountId, limit, offset);
      return { status: 200, body: pageOf(data, q.page, q.per_page, total) };
    },
    doc: {
      summary: "List the account's payment methods, newest first",
      tags: ['payment methods'],
      query: ListQuery,
      responses: { '200': { description: 'a page of payment methods', schema: listOf(PaymentMethodSchema) } },
    },
  };
}
