import type { Infra } from '../../../shared/infra.js';
import { getBillingInfo } from '../billing-info/store.js';
import { getCreditNote } from '../credit-notes/store.js';
import { accountName, getInvoice, legalDetails } from '../invoices/store.js';
import { sellerOf, type Seller } from './seller.js';

/** What a credit note's document (its PDF, the PDF its email attaches) shows: plain data, money as exact decimal strings. */
export interface CreditNoteDocument {
  note: {
    id: string;
    /** Its number in the series shared with invoices (absent: not printed). */
    number?: string | null;
    invoice_id: string;
    customer_id: string;
    type: 'credit' | 'refund';
    currency: string;
    amount: string;
    reason: string;
    refund_status: 'pending' | 'succeeded' | 'failed' | null;
    /** RFC 3339 */
    created_at: string;
  };
  invoice: { amount: string; period_start: string; period_end: string };
  lines: { description: string; invoice_line: number | null; quantity: string | null; amount: string }[];
  customer: { name: string | null };
  address: { line1: string; city: string; state: string; zip: string } | null;
  seller?: Seller;
  /** The customer's locale (services/domain/invoices/invoice-texts.ts): fixed texts, amounts and dates; default en. */
  locale?: string | null;
}

/** What the credit note PDF shows (the download route and the credit note emails render the same). */
export async function creditNoteDocument(
  { pg, config }: Pick<Infra, 'pg' | 'config'>,
  accountId: string,
  creditNoteId: string,
): Promise<CreditNoteDocument> {
  const { note, lines } = await getCreditNote(pg, accountId, creditNoteId);
  const [{ invoice }, billing, name, legal] = await Promise.all([
    getInvoice(pg, accountId, note.invoice_id),
    getBillingInfo(pg, accountId),
    accountName(pg, accountId),
    legalDetails(pg, accountId),
  ]);
  const document: CreditNoteDocument = {
    note: { ...note, created_at: note.created_at.toISOString() },
    invoice: { amount: invoice.amount, period_start: invoice.period_start, period_end: invoice.period_end },
    lines: lines.map((l) => ({
      description: l.description,
      invoice_line: l.invoice_position,
      quantity: l.quantity,
      amount: l.amount,
    })),
    customer: { name },
    address: billing.billing_address,
    seller: await sellerOf({ pg, config }, accountId),
    locale: legal.locale,
  };
  return document;
}
