import type { InvoiceRow } from '../invoices/types.js';

/**
 * The links an email carries, minted by the hosted pages (issue 43): the hosted invoice page (view, pay, PDF) and
 * the page where a customer updates the card a payment failed on. The mail delivery asks these hooks; an email
 * whose link is null goes without it. Until the hosted pages wire their own minting in, the invoice page link is
 * the invoice's `hosted_invoice_url` when the row carries one, and there is no card-update link.
 */
export interface EmailLinks {
  hostedInvoiceUrl(invoice: InvoiceRow): Promise<string | null>;
  updatePaymentMethodUrl(invoice: InvoiceRow): Promise<string | null>;
}

export const DEFAULT_EMAIL_LINKS: EmailLinks = {
  async hostedInvoiceUrl(invoice) {
    const url = (invoice as InvoiceRow & { hosted_invoice_url?: unknown }).hosted_invoice_url;
    return typeof url === 'string' && url !== '' ? url : null;
  },
  async updatePaymentMethodUrl() {
    return null;
  },
};
