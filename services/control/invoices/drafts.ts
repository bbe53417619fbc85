import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { AddInvoiceLineBody, InvoiceSchema } from '../../../shared/api/invoices.js';
import type { BillingDeps } from '../../domain/billing/deps.js';
import { addOneOffLine, finalizeDraftNow, type OneOffRequest } from '../../domain/billing/drafts.js';
import { getInvoiceById } from '../../domain/invoices/store.js';
import { invoiceCustomerTime } from '../../domain/test-clocks/store.js';
import { invoiceResource } from './representation.js';

/**
 * Operators' routes on drafts (services/domain/billing/drafts.ts, BILLING_DRAFTS): finalize one before its grace
 * period is over, or add a one-off line to it. Admin only: a customer never finalizes or changes its invoices.
 */
const lineBody = bodyValidator<AddInvoiceLineBody>(AddInvoiceLineBody);

/** The body's one validation place: exactly one of amount / quantity + unit_price, exact decimals as written. */
export function parseOneOffLine(ctx: RequestContext): OneOffRequest {
  const input = lineBody.parse(ctx.body);
  const literal = numberLiteralsOf(ctx.rawBody);
  const errors: FieldError[] = [];
  const exact = (field: string): string => {
    const parsed = parseAmount(literal([field]) ?? '');
    if ('error' in parsed) errors.push({ field, message: parsed.error });
    return 'value' in parsed ? parsed.value : '0';
  };
  const description = input.description.trim();
  if (!description) errors.push({ field: 'description', message: 'must not be blank' });
  const byAmount = input.amount !== undefined;
  const byPrice = input.quantity !== undefined || input.unit_price !== undefined;
  if (byAmount === byPrice) {
    errors.push({ field: 'amount', message: 'give exactly one of amount, or quantity and unit_price' });
    throw new ValidationError(errors);
  }
  if (!byAmount && (input.quantity === undefined || input.unit_price === undefined))
    errors.push({
      field: input.quantity === undefined ? 'quantity' : 'unit_price',
      message: 'quantity and unit_price go together',
    });
  const req: OneOffRequest = byAmount
    ? { description, amount: exact('amount') }
    : { description, quantity: exact('quantity'), unit_price: exact('unit_price') };
  if (errors.length) throw new ValidationError(errors);
  return req;
}

const drafted = problemResponse(
  'invoice_finalized: the invoice is not a draft any more (finalized by the billing run or an operator)',
);

export function finalizeInvoiceRoute(deps: ApiDeps, billing: () => BillingDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/billing/invoices/:invoice_id/finalize',
    auth: 'admin',
    handler: async (ctx) => {
      const id = ctx.params.invoice_id!;
      // A customer on a test clock: finalized at its clock's time (docs/test-clocks.md).
      const { now } = await invoiceCustomerTime(deps.pg, id);
      await finalizeDraftNow(billing(), id, now);
      return reply.ok(await invoiceResource(deps, await getInvoiceById(deps.pg, id)));
    },
    doc: {
      summary:
        'Finalize a draft now (operators only): re-priced over its usage so far, prepaid credit applied, numbered; the billing run charges it at once',
      tags: ['billing'],
      responses: {
        '200': {
          description: 'The invoice, open (or paid when nothing is left to charge), with its number',
          schema: InvoiceSchema,
        },
        '409': drafted,
      },
    },
  };
}

export function addInvoiceLineRoute(deps: ApiDeps): RouteDef<OneOffRequest> {
  return {
    method: 'POST',
    path: '/v1/billing/invoices/:invoice_id/lines',
    auth: 'admin',
    input: parseOneOffLine,
    handler: async (ctx, line) => {
      const id = ctx.params.invoice_id!;
      await addOneOffLine(deps.pg, id, line);
      return reply.ok(await invoiceResource(deps, await getInvoiceById(deps.pg, id)));
    },
    doc: {
      summary: 'Add a one-off line to a draft (operators only); it is kept when the draft is re-priced at finalization',
      tags: ['billing'],
      requestBody: AddInvoiceLineBody,
      responses: {
        '200': { description: 'The draft with the line appended and its amount raised by it', schema: InvoiceSchema },
        '409': drafted,
        '422': problemResponse(
          'validation_failed: amount, or quantity and unit_price (exactly one form), amount in the currency’s minor unit, description not blank',
        ),
      },
    },
  };
}
