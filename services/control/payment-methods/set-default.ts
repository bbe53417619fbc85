import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { setDefaultPaymentMethod } from '../../domain/payment-methods/store.js';

/** PATCH /v1/billing/payment-methods/:payment_method_id/default — no body. */
export function setDefaultPaymentMethodRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/billing/payment-methods/:payment_method_id/default',
    auth: 'write',
    body: 'none',
    handler: async (ctx) =>
      reply.ok(
        toPaymentMethod(
          await setDefaultPaymentMethod(deps.pg, ctx.principal!.accountId, ctx.params.payment_method_id!),
        ),
      ),
    doc: {
      summary: 'Make this payment method the default (the one invoices are charged to); exactly one is default',
      tags: ['payment methods'],
      responses: {
        '200': { description: 'the payment method, now with is_default: true', schema: PaymentMethodSchema },
      },
    },
  };
}
