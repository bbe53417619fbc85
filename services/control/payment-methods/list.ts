import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { listOf, pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListPaymentMethodsQuery, PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { parseListPaymentMethods } from './input.js';
import { listPaymentMethods } from '../../domain/payment-methods/store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/payment-methods?customer_id — the caller's (an operator's: the named customer's), newest first. */
export function listPaymentMethodsRoute(deps: ApiDeps): RouteDef<ListPaymentMethodsQuery> {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods',
    auth: 'read',
    input: parseListPaymentMethods,
    handler: async (ctx, page) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, page.customer_id);
      const { rows, total } = await listPaymentMethods(deps.pg, accountId, pageWindow(page));
      return reply.page(rows.map(toPaymentMethod), page, total);
    },
    doc: {
      summary: "List the account's payment methods, newest first",
      tags: ['payment methods'],
      query: ListPaymentMethodsQuery,
      responses: { '200': { description: 'a page of payment methods', schema: listOf(PaymentMethodSchema) } },
    },
  };
}
