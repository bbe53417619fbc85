import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { getPaymentMethod } from '../../domain/payment-methods/store.js';

/** GET /v1/billing/payment-methods/:payment_method_id — where the 201's Location points. */
export function getPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods/:payment_method_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(
        toPaymentMethod(await getPaymentMethod(deps.pg, ctx.principal!.accountId, ctx.params.payment_method_id!)),
      ),
    doc: {
      summary: 'Get one payment method',
      tags: ['payment methods'],
      responses: { '200': { description: 'the payment method', schema: PaymentMethodSchema } },
    },
  };
}
