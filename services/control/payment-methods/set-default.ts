import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { setDefaultPaymentMethod } from '../../domain/payment-methods/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** PATCH /v1/billing/payment-methods/:payment_method_id/default — no body. */
export function setDefaultPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/billing/payment-methods/:payment_method_id/default',
    auth: 'write',
    body: 'none',
    handler: async (ctx) => {
      const id = ctx.params.payment_method_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'payment_method', id);
      return reply.ok(toPaymentMethod(await setDefaultPaymentMethod(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Make this payment method the default (the one invoices are charged to); exactly one is default',
      tags: ['payment methods'],
      responses: {
        '200': { description: 'the payment method, now with is_default: true', schema: PaymentMethodSchema },
      },
    },
  };
}
