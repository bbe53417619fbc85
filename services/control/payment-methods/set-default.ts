import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { PaymentMethodSchema } from './schemas.js';
import { setDefaultPaymentMethod } from './store.js';

export function setDefaultPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/billing/payment-methods/:payment_method_id/default',
    auth: 'write',
    body: 'none',
    handler: async (ctx) => {
      const pm = await setDefaultPaymentMethod(deps.pg, ctx.principal!.accountId, ctx.params.payment_method_id!);
      if (!pm) throw new NotFoundError('No such payment method.');
      return { status: 200, body: pm };
    },
    doc: {
      summary: 'Make this payment method the default (the one invoices are charged to); exactly one is default',
      tags: ['payment methods'],
      responses: { '200': { description: 'the payment method, now with is_default: true', schema: PaymentMethodSchema } },
    },
  };
}
