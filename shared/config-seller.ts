import { printedText, type VarSpec } from './config-parsers.js';

/**
 * The seller's defaults on billing documents (docs/seller-settings.md), a part of the one Config (shared/config.ts):
 * what the operator's seller settings fall back to.
 */
export interface SellerConfig {
  /** The seller printed on invoice and credit note PDFs (empty: not printed); the address may span lines. */
  SELLER_NAME: string;
  SELLER_ADDRESS: string;
  SELLER_TAX_ID: string;
  /** A line at the bottom of every page of those PDFs (payment terms, registration, contact). */
  INVOICE_FOOTER: string;
}

export const SELLER_SPEC: { [K in keyof SellerConfig]: VarSpec<SellerConfig[K]> } = {
  SELLER_NAME: {
    parse: printedText(200, false),
    default: '',
    describe: 'seller name on PDFs and emails when seller settings set no legal_name (docs/seller-settings.md)',
  },
  SELLER_ADDRESS: {
    parse: printedText(500, true),
    default: '',
    describe: 'seller address on PDFs when seller settings set none; lines separated by newlines or \\n',
  },
  SELLER_TAX_ID: {
    parse: printedText(64, false),
    default: '',
    describe: 'seller tax id (VAT, EIN…) on PDFs when seller settings set no tax_ids',
  },
  INVOICE_FOOTER: {
    parse: printedText(500, false),
    default: '',
    describe: 'footer line of every PDF page when seller settings set no invoice_footer',
  },
};
