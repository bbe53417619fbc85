import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { IDEMPOTENCY_HEADER } from '../../../shared/http/idempotency.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { CreateCreditNoteBody, ListCreditNotesQuery } from '../../../shared/api/credit-notes.js';
import type { CreditRequest, NewCreditNote } from '../../domain/credit-notes/types.js';

/**
 * Credit notes' one validation place: the schema, then exactly one of amount / lines (and per line exactly one
 * of quantity / amount), each an exact decimal as the client wrote it. What depends on the invoice — its
 * currency's minor unit, what is left to credit — is the billing rule's (services/domain/billing/credit-notes.ts).
 */
const createBody = bodyValidator<CreateCreditNoteBody>(CreateCreditNoteBody);
const listQuery = queryValidator<ListCreditNotesQuery>(ListCreditNotesQuery);

export const parseListCreditNotes = (ctx: RequestContext): ListCreditNotesQuery => listQuery.parseQuery(ctx.query);

export function parseNewCreditNote(ctx: RequestContext): NewCreditNote {
  const input = createBody.parse(ctx.body);
  const literal = numberLiteralsOf(ctx.rawBody);
  const errors: FieldError[] = [];
  const exact = (path: (string | number)[], field: string): string | undefined => {
    const parsed = parseAmount(literal(path) ?? '');
    if ('error' in parsed) {
      errors.push({ field, message: parsed.error });
      return undefined;
    }
    return parsed.value;
  };
  let credit: CreditRequest | undefined;
  if ((input.amount === undefined) === (input.lines === undefined)) {
    errors.push({ field: 'amount', message: 'give exactly one of amount or lines' });
  } else if (input.amount !== undefined) {
    const amount = exact(['amount'], 'amount');
    if (amount) credit = { kind: 'amount', amount };
  } else {
    const seen = new Set<number>();
    const lines = input.lines!.map((l, i) => {
      if (seen.has(l.line)) errors.push({ field: `lines[${i}].line`, message: 'names the same invoice line twice' });
      seen.add(l.line);
      if ((l.quantity === undefined) === (l.amount === undefined)) {
        errors.push({ field: `lines[${i}]`, message: 'give exactly one of quantity or amount' });
        return { line: l.line };
      }
      return l.quantity !== undefined
        ? { line: l.line, quantity: exact(['lines', i, 'quantity'], `lines[${i}].quantity`) }
        : { line: l.line, amount: exact(['lines', i, 'amount'], `lines[${i}].amount`) };
    });
    credit = { kind: 'lines', lines };
  }
  const reason = input.reason.trim();
  if (!reason) errors.push({ field: 'reason', message: 'must not be blank' });
  if (errors.length) throw new ValidationError(errors);
  return {
    invoiceId: ctx.params.invoice_id!,
    credit: credit!,
    reason,
    requestKey: ctx.headers[IDEMPOTENCY_HEADER] ?? null,
  };
}
