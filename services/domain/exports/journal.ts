import { Decimal } from '../../../shared/money/decimal.js';
import type { ExportRecord } from './types.js';

/**
 * The accounting export (docs/exports.md "Journal entries"): each financial document as double-entry lines that
 * balance to zero — Σ debit = Σ credit per document, exactly (decimals, never floats). Plain data in and out.
 */
export type LedgerAccount = 'accounts_receivable' | 'revenue' | 'tax_payable' | 'customer_credit' | 'cash';

export type JournalDocument =
  | {
      type: 'invoice';
      id: string;
      number: string | null;
      customerId: string;
      currency: string;
      /** What the customer owes: Σ of the invoice's lines. */
      amount: string;
      /** Tax inside `amount` (added or included). */
      tax: string;
      /** Prepaid credit applied on the invoice, as a positive amount (its credit lines, sign turned). */
      creditApplied: string;
      at: Date;
    }
  | { type: 'payment'; id: string; customerId: string; currency: string; amount: string; at: Date }
  | {
      type: 'credit_note';
      id: string;
      number: string | null;
      customerId: string;
      currency: string;
      amount: string;
      tax: string;
      at: Date;
    }
  | {
      type: 'refund';
      id: string;
      number: string | null;
      customerId: string;
      currency: string;
      amount: string;
      at: Date;
    };

/** Each posting as a signed amount: positive = debit, negative = credit. */
function postings(d: JournalDocument): [LedgerAccount, Decimal][] {
  const amount = new Decimal(d.amount);
  switch (d.type) {
    case 'invoice': {
      const tax = new Decimal(d.tax);
      const credit = new Decimal(d.creditApplied);
      // The customer owes `amount`; prepaid credit covered `credit` more; what was sold is all of it but the tax.
      return [
        ['accounts_receivable', amount],
        ['customer_credit', credit],
        ['revenue', amount.plus(credit).minus(tax).negated()],
        ['tax_payable', tax.negated()],
      ];
    }
    case 'payment':
      return [
        ['cash', amount],
        ['accounts_receivable', amount.negated()],
      ];
    case 'credit_note': {
      const tax = new Decimal(d.tax);
      return [
        ['revenue', amount.minus(tax)],
        ['tax_payable', tax],
        ['accounts_receivable', amount.negated()],
      ];
    }
    case 'refund':
      return [
        ['accounts_receivable', amount],
        ['cash', amount.negated()],
      ];
  }
}

/** A document's journal lines (zero postings left out); their debits and credits balance. */
export function journalLines(d: JournalDocument): ExportRecord[] {
  const lines: ExportRecord[] = [];
  for (const [account, signed] of postings(d)) {
    if (signed.isZero()) continue;
    lines.push({
      entry_id: `${d.type}:${d.id}:${lines.length + 1}`,
      document_type: d.type,
      document_id: d.id,
      document_number: 'number' in d ? d.number : null,
      customer_id: d.customerId,
      ledger_account: account,
      debit: signed.gt(0) ? signed.toFixed() : '0',
      credit: signed.lt(0) ? signed.negated().toFixed() : '0',
      currency: d.currency,
      posted_at: d.at,
    });
  }
  return lines;
}
