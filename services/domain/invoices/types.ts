import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import type { LineType } from '../../../shared/vocabulary.js';
import type { InvoiceReason, InvoiceStatus, PaymentAttemptStatus, TaxExempt } from '../../../shared/vocabulary.js';
import type { LineTax } from '../pricing/invoice-lines.js';

/** invoices row; NUMERIC as text (exact), dates as YYYY-MM-DD text (no time-zone shift through JS Date). */
export interface InvoiceRow {
  id: string;
  /**
   * The deployment's gapless series of invoices and credit notes (services/domain/invoices/numbering.ts), as
   * printed: ML-2026-000042.
   */
  number: string | null;
  account_id: string;
  customer_id: string;
  /** null: a top-up invoice (reason top_up), which bills no subscription. */
  subscription_id: string | null;
  status: InvoiceStatus;
  /** period, or threshold (progressive billing: services/domain/billing/thresholds.ts). */
  reason: InvoiceReason;
  currency: string;
  amount: string;
  /** Σ of the charge lines as priced (invoices from before tax: the amount). */
  subtotal: string;
  /** Σ of the tax at every rate, included or added (docs/billing.md "Tax"). */
  tax: string;
  /** The customer's tax exemption when the invoice was created ('reverse': the PDF prints the reverse-charge note). */
  tax_exempt: TaxExempt;
  /** created_at + the customer's net_terms_days (invoices from before terms: created_at). */
  due_at: Date;
  amount_credited: string;
  period_start: string;
  period_end: string;
  attempt_count: number;
  next_payment_attempt_at: Date | null;
  last_payment_error: { code: string; message: string; decline_code?: string } | null;
  /** The state of the invoice's latest payment attempt (null: none yet); `unknown` until settled from the processor. */
  payment_attempt_status: PaymentAttemptStatus | null;
  /** Stripe's status of a dispute of the charge that paid the invoice (charge.dispute.*); null: never disputed. */
  dispute_status: string | null;
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
  /** Tax lines: the rate and the tax at it. */
  tax_rate_id: string | null;
  tax_amount: string | null;
  /** Taxed lines: their tax per rate. */
  taxes: LineTax[] | null;
  /** Discount lines: the coupon. */
  coupon_id?: string | null;
}

export interface InvoiceWithLines {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
}

/**
 * What is still to be paid on an invoice: its amount less credit notes while unpaid (a draft: what it would
 * charge if finalized now); nothing once paid or void.
 */
export function amountDue(r: Pick<InvoiceRow, 'status' | 'amount' | 'amount_credited'>): string {
  return r.status === 'draft' || r.status === 'open' || r.status === 'uncollectible'
    ? canonicalDecimal(new Decimal(r.amount).minus(r.amount_credited))
    : '0';
}

/**
 * When an invoice is due: its issue date plus the customer's net_terms_days (0 by default: due when created).
 * The first automatic payment attempt runs then and dunning counts from it (services/domain/billing/dunning.ts).
 */
export function invoiceDueAt(r: Pick<InvoiceRow, 'due_at'>): Date {
  return r.due_at;
}
