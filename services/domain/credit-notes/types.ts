import type { CreditNoteType } from '../../../shared/vocabulary.js';
/** Credit notes (docs/design.md §8): a credit or refund of an invoice, as stored. */

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

/** What the operator asked to credit: a plain amount, or per invoice line a quantity or an amount (exact decimal text). */
export type CreditRequest =
  | { kind: 'amount'; amount: string }
  | { kind: 'lines'; lines: { line: number; quantity?: string; amount?: string }[] };

export interface NewCreditNote {
  invoiceId: string;
  credit: CreditRequest;
  reason: string;
  /** The request's Idempotency-Key, if any. */
  requestKey: string | null;
}

export interface CreditNoteRow {
  id: string;
  /** Its number in the deployment's gapless series shared with invoices, as printed (ML-2026-000043). */
  number: string;
  account_id: string;
  invoice_id: string;
  customer_id: string;
  type: CreditNoteType;
  currency: string;
  amount: string;
  /** The invoice tax it reverses (inside amount). */
  tax: string;
  reason: string;
  refund_status: RefundStatus | null;
  refund_id: string | null;
  refund_failure_code: string | null;
  created_at: Date;
}

export interface CreditNoteLineRow {
  credit_note_id: string;
  position: number;
  invoice_position: number | null;
  /** A line reversing tax: the invoice line whose tax it is. */
  tax_of_position: number | null;
  description: string;
  quantity: string | null;
  amount: string;
}

export interface CreditNoteWithLines {
  note: CreditNoteRow;
  lines: CreditNoteLineRow[];
}
