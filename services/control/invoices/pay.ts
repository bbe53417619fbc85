import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { payInvoiceNow } from '../../domain/billing/payments.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { InvoiceSchema } from '../../../shared/api/invoices.js';
import { invoiceResource } from './representation.js';
import { getInvoice } from '../../domain/invoices/store.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { processorFor } from '../../domain/payments/create.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/**
 * POST /v1/billing/invoices/:invoice_id/pay — a payment attempt now with the default payment method (after
 * a new card, say) on an open or uncollectible invoice, through the billing engine's attempt (recorded before
 * the charge, idempotency key `<invoice id>:<attempt>`), for its amount_due (what credit notes left of it). 200 with the paid invoice; 402 with the failure code
 * when the charge fails (the invoice unchanged but for attempt_count); 409 when paid or void.
 */
export function payInvoiceRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef {
  return {
    method: 'POST',
    path: '/v1/billing/invoices/:invoice_id/pay',
    auth: 'write',
    handler: async (ctx) => {
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'invoice', ctx.params.invoice_id!);
      // A customer on a test clock pays at the clock's time, through the sandbox (docs/test-clocks.md).
      const { now, clockId } = await accountTime(deps.pg, accountId);
      const charging = processorFor(deps.pg, processor, clockId);
      await payInvoiceNow({ pg: deps.pg, processor: charging, log: deps.log }, accountId, ctx.params.invoice_id!, now);
      return reply.ok(await invoiceResource(deps, await getInvoice(deps.pg, accountId, ctx.params.invoice_id!)));
    },
    doc: {
      summary: 'Pay an open or uncollectible invoice now with the default payment method (its amount_due is charged)',
      tags: ['billing'],
      responses: {
        '200': { description: 'The invoice, paid', schema: InvoiceSchema },
        '409': problemResponse('invoice_paid, invoice_void, invoice_draft (charged once finalized)'),
        '402': problemResponse(
          'The charge failed (card_declined, insufficient_funds) or there is no payment method (no_payment_method); the invoice is unchanged but for attempt_count',
        ),
      },
    },
  };
}
