import type { PgPool } from '../../../shared/clients/postgres.js';
import type { InvoiceRow } from '../invoices/types.js';
import { hostedInvoiceUrls, mintCardLink } from '../hosted-pages/links.js';
import { hostedKey } from '../hosted-pages/tokens.js';

/**
 * The links an email carries, minted by the hosted pages (issue 43): the hosted invoice page (view, pay, PDF) and
 * the page where a customer updates the card a payment failed on. The mail delivery asks these hooks; an email
 * whose link is null goes without it. The dispatcher uses `hostedEmailLinks`; a test may hand it others.
 */
export interface EmailLinks {
  hostedInvoiceUrl(invoice: InvoiceRow): Promise<string | null>;
  updatePaymentMethodUrl(invoice: InvoiceRow): Promise<string | null>;
}

/**
 * The hosted pages' own links: the invoice's page (null once revoked) and, for a failed payment, a fresh card page
 * link of the invoice's customer (docs/payments.md "Hosted pages"; minting it retires the customer's older one).
 */
export function hostedEmailLinks(
  pg: PgPool,
  config: { SECRET_KEY: Buffer; PUBLIC_BASE_URL: string },
  clock: () => Date = () => new Date(),
): EmailLinks {
  const key = hostedKey(config.SECRET_KEY);
  return {
    async hostedInvoiceUrl(invoice) {
      const urls = await hostedInvoiceUrls(pg, key, config.PUBLIC_BASE_URL, [invoice]);
      return urls.get(invoice.id) ?? null;
    },
    async updatePaymentMethodUrl(invoice) {
      return (await mintCardLink(pg, config.PUBLIC_BASE_URL, invoice.account_id, clock())).url;
    },
  };
}
