import type { Infra } from '../../../shared/infra.js';
import { sellerProfile } from '../seller/profile.js';

/**
 * Who issues the document: the seller profile (services/domain/seller/profile.ts — the operator's seller settings
 * over SELLER_* and INVOICE_FOOTER); an empty field is not printed.
 */
export interface Seller {
  name: string;
  /** Lines separated by newlines. */
  address: string;
  /** Each printed as "Tax ID <text>". */
  tax_ids: string[];
  /** Printed under the tax ids: "Questions: <email>". */
  support_email?: string | null;
  footer: string;
  /** A PNG or JPEG checked where the operator uploaded it (services/domain/seller/logo.ts). */
  logo?: { media_type: string; data: Uint8Array } | null;
}

/** The seller printed on an account's billing documents (PDFs, emails, hosted pages). */
export async function sellerOf(deps: Pick<Infra, 'pg' | 'config'>, accountId: string): Promise<Seller> {
  const p = await sellerProfile(deps, accountId);
  return {
    name: p.name,
    address: p.address_lines.join('\n'),
    tax_ids: p.tax_ids.map((t) => (t.type ? `${t.value} (${t.type})` : t.value)),
    support_email: p.support_email,
    footer: p.footer,
    logo: p.logo,
  };
}
