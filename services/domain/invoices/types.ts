import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import type { LineType } from '../../../shared/vocabulary.js';
import type { InvoiceStatus } from '../../../shared/vocabulary.js';

/** invoices row; NUMERIC as text (exact), dates as YYYY-MM-DD text (no time-zone shift through JS Date). */
export interface InvoiceRow {
  id: string;
  /** The deployment's invoice series (infra/migrations/postgres/525_invoice_numbers.sql), as printed: 000042. */
  number: string;
  account_id: string;
  customer_id: string;
  subscription_id: string;
  status: InvoiceStatus;
  currency: string;
  amount: string;
  amount_credited: string;
  period_start: string;
  period_end: string;
  attempt_count: number;
  next_payment_attempt_at: Date | null;
  last_payment_error: { code: string; message: string } | null;
  created_at: Date;
  paid_at: Date | null;
  /** When the SMTP server accepted the invoice's email (docs/emails.md); null until then, or when none is sent. */
  emailed_at: Date | null;
}

export interface InvoiceLineRow {
  invoice_id: string;
  position: number;
  type: LineType;
  product_id: string | null;
  meter_id: string | null;
  adjusts_invoice_id: string | null;
  /** Lines of a grouped item: the group's dimension values. */
  dimensions?: Record<string, string | null> | null;
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

export interface InvoiceWithLines {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
}

/** What is still to be paid on an invoice: its amount less credit notes while unpaid; nothing once paid or void. */
export function amountDue(r: Pick<InvoiceRow, 'status' | 'amount' | 'amount_credited'>): string {
  return r.status === 'open' || r.status === 'uncollectible'
    ? canonicalDecimal(new Decimal(r.amount).minus(r.amount_credited))
    : '0';
}

/**
 * When an invoice is due: when it is created. meterline charges the default card at once (the first automatic
 * attempt, then the retries of docs/design.md); nothing waits for a customer to pay by a later date — as
 * Stripe's charge_automatically invoices print their date of issue as the due date.
 */
export function invoiceDueAt(r: Pick<InvoiceRow, 'created_at'>): Date {
  return r.created_at;
}
