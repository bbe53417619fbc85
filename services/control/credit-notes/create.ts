import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { issueCreditNote } from '../../domain/billing/credit-notes.js';
import { CreateCreditNoteBody, CreditNoteSchema } from '../../../shared/api/credit-notes.js';
import { toCreditNote } from './representation.js';
import type { NewCreditNote } from '../../domain/credit-notes/types.js';
import { parseNewCreditNote } from './input.js';
import { invoiceCustomerTime } from '../../domain/test-clocks/store.js';
import { processorFor } from '../../domain/payments/create.js';

/**
 * POST /v1/billing/invoices/:invoice_id/credit-notes — an operator (admin scope) credits an invoice: on an unpaid
 * one it lowers what is owed, on a paid one it refunds through the processor, exactly once even when retried
 * (services/domain/billing/credit-notes.ts). A customer never credits its own invoices.
 */
export function createCreditNoteRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef<NewCreditNote> {
  return {
    method: 'POST',
    path: '/v1/billing/invoices/:invoice_id/credit-notes',
    auth: 'admin',
    input: parseNewCreditNote,
    handler: async (ctx, note) => {
      // A customer on a test clock: at its clock's time, refunded through the sandbox (docs/test-clocks.md).
      const { now, clockId } = await invoiceCustomerTime(deps.pg, ctx.params.invoice_id!);
      const refunder = processorFor(deps.pg, processor, clockId);
      const issued = await issueCreditNote(
        { pg: deps.pg, processor: refunder, log: deps.log, numberPrefix: deps.config.INVOICE_NUMBER_PREFIX },
        note,
        now,
      );
      return reply.created(toCreditNote(issued), `/v1/billing/credit-notes/${issued.note.id}`);
    },
    doc: {
      summary: 'Credit an invoice (operators only): lower what is owed on an unpaid one, refund part of a paid one',
      tags: ['billing'],
      requestBody: CreateCreditNoteBody,
      responses: {
        '201': {
          description:
            'The credit note (Location names it); a retry with the same Idempotency-Key answers with the same note and never refunds twice',
          schema: CreditNoteSchema,
        },
        '409': problemResponse(
          'invoice_void; invoice_draft (a draft is changed or finalized, not credited); invoice_payment_pending (a payment attempt is in flight: retry); invoice_not_charged (paid without a charge: nothing to refund)',
        ),
        '422': problemResponse(
          'credit_exceeds_invoice (errors[].field amount or lines) or credit_exceeds_line (lines[i].amount / lines[i].quantity): more than is left to credit; validation_failed otherwise',
        ),
      },
    },
  };
}
