import type { Config } from '../../../shared/config.js';

/** Who issues the document (SELLER_* and INVOICE_FOOTER in shared/config.ts); an empty field is not printed. */
export interface Seller {
  name: string;
  /** Lines separated by newlines. */
  address: string;
  tax_id: string;
  footer: string;
}

/** The seller printed on billing documents: the deployment's configuration (SELLER_*, INVOICE_FOOTER). */
export function sellerOf(
  config: Pick<Config, 'SELLER_NAME' | 'SELLER_ADDRESS' | 'SELLER_TAX_ID' | 'INVOICE_FOOTER'>,
): Seller {
  return {
    name: config.SELLER_NAME,
    address: config.SELLER_ADDRESS,
    tax_id: config.SELLER_TAX_ID,
    footer: config.INVOICE_FOOTER,
  };
}
