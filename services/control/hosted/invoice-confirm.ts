import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { HostedPaymentSchema } from '../../../shared/api/hosted-pages.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { settleAttemptFromProcessor } from '../../domain/billing/payments.js';
import { getInvoiceById } from '../../domain/invoices/store.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { chargingFor, openInvoice, orNotFound } from './access.js';
import { answerOf } from './payment-answer.js';

/**
 * POST /hosted/invoices/:invoice_id/:token/confirm — after the 3-D Secure challenge in the browser: the waiting
 * attempt settled from the processor's own record of the payment (not from anything the browser says), as its
 * webhook would; whichever comes first wins, the invoice is paid once.
 */
export function hostedConfirmRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef {
  const links = { key: hostedKey(deps.config.SECRET_KEY), baseUrl: deps.config.PUBLIC_BASE_URL };
  return {
    method: 'POST',
    path: '/hosted/invoices/:invoice_id/:token/confirm',
    auth: 'public',
    handler: async (ctx) => {
      const { accountId, invoice } = orNotFound(await openInvoice(deps, ctx));
      const { now, processor } = await chargingFor(deps, live, accountId);
      const payDeps = { pg: deps.pg, processor, log: deps.log, hostedLinks: links };
      const settled = await settleAttemptFromProcessor(payDeps, invoice.invoice.id, now);
      if (settled) return reply.ok(await answerOf(payDeps, settled));
      const { invoice: now_ } = await getInvoiceById(deps.pg, invoice.invoice.id);
      if (now_.status === 'paid') return reply.ok({ status: 'paid' });
      return reply.ok({
        status: 'open',
        code: 'authentication_incomplete',
        message: 'The payment is not complete: authenticate it with your bank.',
      });
    },
    doc: {
      summary: 'The hosted invoice page after 3-D Secure: the attempt settled from the processor’s record',
      tags: ['hosted pages'],
      responses: {
        '200': { description: 'paid, failed (why), or open', schema: HostedPaymentSchema },
        '404': problemResponse('the link does not work'),
      },
    },
  };
}
