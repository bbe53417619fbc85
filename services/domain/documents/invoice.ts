import type { Infra } from '../../../shared/infra.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import type { InvoiceReason } from '../../../shared/vocabulary.js';
import { getBillingInfo } from '../billing-info/store.js';
import { documentLines, invoicesNamedIn, type DocumentLine } from '../invoices/document-lines.js';
import {
  accountName,
  customerReference,
  getInvoice,
  invoiceNumbers,
  legalDetails,
  linePriceModels,
} from '../invoices/store.js';
import { invoiceDueAt } from '../invoices/types.js';
import type { LegalAddress } from '../tax/types.js';
import { sellerOf, type Seller } from './seller.js';

/** What an invoice's document (its PDF, the PDF its emails attach) shows: plain data, money as exact decimal strings. */
export interface InvoiceDocument {
  invoice: {
    id: string;
    status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
    currency: string;
    amount: string;
    /** What credit notes took off it; printed with the amount still due when not 0. */
    amount_credited?: string;
    /** What the invoice bills: the period, usage so far on reaching the threshold, or a period ahead. */
    reason?: InvoiceReason;
    period_start: string;
    period_end: string;
    /** RFC 3339 */
    created_at: string;
    paid_at: string | null;
    /** The invoice's number and due date, printed when the invoice has them. */
    number?: string | null;
    /** RFC 3339 or YYYY-MM-DD */
    due_at?: string | null;
    /** Totals before and of tax, printed when the invoice has them (docs/billing.md "Tax"). */
    subtotal?: string;
    tax?: string;
    /** Of `tax`, what is inside the lines (inclusive rates). */
    tax_included?: string;
    /** 'reverse': no tax, the reverse-charge note is printed. */
    tax_exempt?: 'none' | 'exempt' | 'reverse';
  };
  /** As the document shows them (services/domain/invoices/document-lines.ts): no ids, sub-lines that multiply. */
  lines: DocumentLine[];
  /** The account's name, its own reference (external id); its legal name and tax ids when it has them. */
  customer: {
    name: string | null;
    reference?: string | null;
    legal_name?: string | null;
    tax_ids?: { type: string; value: string }[];
  };
  address: { line1: string; city: string; state: string; zip: string } | null;
  /** The customer's legal address, printed instead of `address` when set. */
  legal_address?: LegalAddress | null;
  seller?: Seller;
  /** The customer's locale (services/domain/invoices/invoice-texts.ts): fixed texts, amounts and dates; default en. */
  locale?: string | null;
}

/**
 * What the invoice PDF shows (the download route and the invoice emails render the same; the pdf worker lays it out): the invoice of the
 * account (another account's is not found), its lines, the account's current billing address, the seller.
 */
export async function invoiceDocument(
  { pg, config }: Pick<Infra, 'pg' | 'config'>,
  accountId: string,
  invoiceId: string,
): Promise<InvoiceDocument> {
  const { invoice, lines } = await getInvoice(pg, accountId, invoiceId);
  const referred = invoicesNamedIn(lines);
  const [billing, name, legal, reference, priceModels, numbers] = await Promise.all([
    getBillingInfo(pg, accountId),
    accountName(pg, accountId),
    legalDetails(pg, accountId),
    customerReference(pg, accountId),
    linePriceModels(pg, invoiceId),
    invoiceNumbers(pg, accountId, referred),
  ]);
  const taxIncluded = lines
    .filter((l) => l.type === 'tax' && new Decimal(l.amount).isZero())
    .reduce((s, l) => s.plus(l.tax_amount ?? '0'), new Decimal(0));
  const document: InvoiceDocument = {
    invoice: {
      id: invoice.id,
      number: invoice.number,
      status: invoice.status,
      reason: invoice.reason,
      currency: invoice.currency,
      amount: invoice.amount,
      amount_credited: invoice.amount_credited,
      period_start: invoice.period_start,
      period_end: invoice.period_end,
      created_at: invoice.created_at.toISOString(),
      due_at: invoiceDueAt(invoice).toISOString(),
      subtotal: invoice.subtotal,
      tax: invoice.tax,
      tax_included: canonicalDecimal(taxIncluded),
      tax_exempt: invoice.tax_exempt,
      paid_at: invoice.paid_at ? invoice.paid_at.toISOString() : null,
    },
    lines: documentLines(lines, invoice.currency, priceModels, numbers),
    customer: { name, reference, legal_name: legal.legal_name, tax_ids: legal.tax_ids },
    address: billing.billing_address,
    legal_address: legal.address,
    seller: await sellerOf({ pg, config }, accountId),
    locale: legal.locale,
  };
  return document;
}
