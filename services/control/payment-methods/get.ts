import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { getPaymentMethod } from '../../domain/payment-methods/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/payment-methods/:payment_method_id — where the 201's Location points. */
export function getPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods/:payment_method_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.payment_method_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'payment_method', id);
      return reply.ok(toPaymentMethod(await getPaymentMethod(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Get one payment method',
      tags: ['payment methods'],
      responses: { '200': { description: 'the payment method', schema: PaymentMethodSchema } },
    },
  };
}
