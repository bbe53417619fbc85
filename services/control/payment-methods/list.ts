import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListPaymentMethodsQuery, PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { parseListPaymentMethods } from './input.js';
import { listPaymentMethods } from '../../domain/payment-methods/store.js';

/** GET /v1/billing/payment-methods — newest first. */
export function listPaymentMethodsRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods',
    auth: 'read',
    input: parseListPaymentMethods,
    handler: async (ctx, page) => {
      const { rows, total } = await listPaymentMethods(deps.pg, ctx.principal!.accountId, pageWindow(page));
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
