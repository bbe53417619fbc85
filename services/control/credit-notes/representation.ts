import { JsonDecimal } from '../../../shared/money/json.js';
import type { CreditNoteWithLines } from '../../domain/credit-notes/types.js';

/** The API representation (shared/api/credit-notes.ts) of the domain's rows. */

export function toCreditNote({ note: r, lines }: CreditNoteWithLines) {
  return {
    id: r.id,
    number: r.number,
    invoice_id: r.invoice_id,
    customer_id: r.customer_id,
    type: r.type,
    currency: r.currency,
    amount: new JsonDecimal(r.amount),
    tax: new JsonDecimal(r.tax),
    reason: r.reason,
    lines: lines.map((l) => ({
      invoice_line: l.invoice_position,
      ...(l.tax_of_position !== null ? { tax_of_line: l.tax_of_position } : {}),
      description: l.description,
      quantity: l.quantity === null ? null : new JsonDecimal(l.quantity),
      amount: new JsonDecimal(l.amount),
    })),
    refund: r.refund_status ? { status: r.refund_status, id: r.refund_id, failure_code: r.refund_failure_code } : null,
    created_at: r.created_at.toISOString(),
  };
}
