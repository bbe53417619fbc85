import { Decimal } from '../../../shared/money/decimal.js';
import type { TaxExempt } from '../../../shared/vocabulary.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';
import { isoDate } from './deductions.js';
import { firstPaymentAttemptAt } from './dunning.js';
import type { InvoiceTotals } from './invoice-amounts.js';
import type { InvoiceToIssue } from './issue.js';

const DAY_MS = 86_400_000;

/** An invoice's period_end: the last day of a period ending at `end` (a UTC midnight). */
export const lastDay = (end: Date) => isoDate(end.getTime() - DAY_MS);

/** A finalized invoice's status: nothing to charge → paid at once, without a charge; else open. */
export function finalStatus(amount: string): 'open' | 'paid' {
  return new Decimal(amount).lte(0) ? 'paid' : 'open';
}

/**
 * Whether a priced invoice bills nothing at all: no line but, at most, a coupon's 0 "nothing to discount" line (a
 * coupon covering a month of a flat-only quarterly or yearly plan finds no charge there; that alone is no reason
 * for a numbered, announced invoice of 0).
 */
export function nothingToBill(priced: PricedInvoice): boolean {
  return priced.lines.every((l) => l.type === 'discount' && l.product_id === null && new Decimal(l.amount).isZero());
}

/** What a subscription's invoice is written for: the subscription, its customer (tax profile, terms). */
export interface InvoiceSubscriber {
  subscription_id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  tax_exempt: TaxExempt;
  /** Days from issue to due; a threshold invoice passes 0 (due at once, whatever the customer's terms). */
  net_terms_days: number;
}

/**
 * THE row of a subscription's invoice for a period [start, end), as every issue writes it — a period's close, an
 * advance, a threshold invoice, a finalized draft (issue.ts): its priced lines and their totals, due the
 * customer's net terms after `now`, its first payment attempt at the due date (dunning.ts); `status` is
 * finalStatus(amount) unless the caller says otherwise (a draft; a threshold invoice is always open).
 */
export function subscriptionInvoice(v: {
  id: string;
  subscriber: InvoiceSubscriber;
  period: { start: Date; end: Date };
  priced: PricedInvoice;
  totals: InvoiceTotals;
  now: Date;
  status?: InvoiceToIssue['status'];
  thresholdSeq?: number;
}): InvoiceToIssue {
  const s = v.subscriber;
  const dueAt = new Date(v.now.getTime() + s.net_terms_days * DAY_MS);
  return {
    id: v.id,
    account_id: s.account_id,
    customer_id: s.customer_id,
    subscription_id: s.subscription_id,
    status: v.status ?? finalStatus(v.priced.amount),
    currency: s.currency,
    amount: v.priced.amount,
    subtotal: v.totals.subtotal,
    tax: v.totals.tax,
    tax_exempt: s.tax_exempt,
    period_start: isoDate(v.period.start.getTime()),
    period_end: lastDay(v.period.end),
    due_at: dueAt,
    // Dunning counts from the due date (net_terms_days 0: at once).
    first_attempt: firstPaymentAttemptAt(dueAt),
    threshold_seq: v.thresholdSeq ?? null,
    priced: v.priced,
  };
}
