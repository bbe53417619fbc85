import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { PaymentMethodSchema } from './schemas.js';
import { getPaymentMethod } from './store.js';

/** Where the 201's Location points. */
export function getPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/payment-methods/:payment_method_id',
    auth: 'read',
    handler: async (ctx) => {
      const pm = await getPaymentMethod(deps.pg, ctx.principal!.accountId, ctx.params.payment_method_id!);
      if (!pm) throw new NotFoundError('No such payment method.');
      return { status: 200, body: pm };
    },
    doc: {
      summary: 'Get one payment method',
      tags: ['payment methods'],
      responses: { '200': { description: 'the payment method', schema: PaymentMethodSchema } },
    },
  };
}
