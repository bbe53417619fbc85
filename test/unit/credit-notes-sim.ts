import { creditLinesOf } from '../../services/domain/billing/credit-notes.js';
import type { LineToCredit } from '../../services/domain/credit-notes/store.js';
import type { CreditRequest } from '../../services/domain/credit-notes/types.js';
import type { PricedInvoice } from '../../services/domain/pricing/invoice-lines.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Credit notes without a server: an issued invoice as credit-notes.ts sees it (its lines, what notes took off each)
 * and the notes taken one after the other, as the store would record them (credit_note_lines summed per line).
 */
export interface CreditState {
  invoice: { currency: string; amount: string; amount_credited: string; tax: string; tax_credited: string };
  lines: LineToCredit[];
}

export function creditState(priced: PricedInvoice, tax: string): CreditState {
  return {
    invoice: { currency: priced.currency, amount: priced.amount, amount_credited: '0', tax, tax_credited: '0' },
    lines: priced.lines.map((l, position) => ({
      position,
      type: l.type,
      product_id: l.product_id,
      adjusts_invoice_id: l.adjusts_invoice_id,
      taxes: l.taxes ?? null,
      tax_rate_id: l.tax_rate_id ?? null,
      description: l.description,
      quantity: l.quantity,
      amount: l.amount,
      credited_amount: '0',
      credited_quantity: '0',
    })),
  };
}

/** Takes one note (throws the ValidationError a refused one answers) and records it. */
export function takeNote(state: CreditState, credit: CreditRequest): { amount: string; tax: string } {
  const note = creditLinesOf(state.invoice, state.lines, credit, 'test');
  for (const l of note.lines) {
    if (l.invoice_position === null) continue;
    const line = state.lines[l.invoice_position]!;
    line.credited_amount = new Decimal(line.credited_amount).plus(l.amount).toFixed();
    if (l.quantity !== null) line.credited_quantity = new Decimal(line.credited_quantity).plus(l.quantity).toFixed();
  }
  state.invoice.amount_credited = new Decimal(state.invoice.amount_credited).plus(note.amount).toFixed();
  state.invoice.tax_credited = new Decimal(state.invoice.tax_credited).plus(note.tax).toFixed();
  return { amount: note.amount, tax: note.tax };
}
