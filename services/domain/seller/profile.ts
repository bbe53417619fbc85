import type { Config } from '../../../shared/config.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { LegalAddress, TaxId } from '../tax/types.js';
import type { Logo } from './logo.js';
import { readSellerSettings } from './settings-store.js';

/**
 * THE seller of an account's billing documents (issue 48): what invoice and credit note PDFs, emails and the hosted
 * invoice page print as the issuer. The operator's settings (./settings-store.ts) over the environment's defaults
 * (SELLER_NAME, SELLER_ADDRESS, SELLER_TAX_ID, INVOICE_FOOTER, MAIL_FROM); an empty field is not printed.
 */
export interface SellerProfile {
  /** Legal name, else SELLER_NAME; '' when neither is set. */
  name: string;
  /** The address as printed, one line each. */
  address_lines: string[];
  /** `type` '' for SELLER_TAX_ID (free text, no kind). */
  tax_ids: TaxId[];
  support_email: string | null;
  /** The footer line of every PDF page; '' for none. */
  footer: string;
  /** The emails' From: the seller's name (or MAIL_FROM's own) and the address. */
  from: { name: string; address: string };
  logo: Logo | null;
}

type Queryable = Pick<PgPool, 'query'> | PgClient;

/**
 * The seller of `accountId`'s documents. A deployment has one seller today — every account is a customer of the
 * deployment's operator (docs/design.md §6) — so the account names whose documents are being made, not whose
 * settings are read; callers pass it so a per-account seller would change nothing but this function.
 */
export async function sellerProfile(
  deps: {
    pg: Queryable;
    config: Pick<Config, 'SELLER_NAME' | 'SELLER_ADDRESS' | 'SELLER_TAX_ID' | 'INVOICE_FOOTER' | 'MAIL_FROM'>;
  },
  _accountId: string,
): Promise<SellerProfile> {
  const { settings: s, logo } = await readSellerSettings(deps.pg);
  const c = deps.config;
  const name = s.legal_name ?? c.SELLER_NAME;
  const mailFrom = splitMailbox(c.MAIL_FROM);
  return {
    name,
    address_lines: s.address ? addressLines(s.address) : c.SELLER_ADDRESS.split('\n').filter((l) => l.trim() !== ''),
    tax_ids: s.tax_ids.length > 0 ? s.tax_ids : c.SELLER_TAX_ID ? [{ type: '', value: c.SELLER_TAX_ID }] : [],
    support_email: s.support_email,
    footer: s.invoice_footer ?? c.INVOICE_FOOTER,
    from: s.email_from ? { name, address: s.email_from } : { name: mailFrom.name || name, address: mailFrom.address },
    logo,
  };
}

/** A legal address as printed: street lines, postal code and city (and region), country. */
export function addressLines(a: LegalAddress): string[] {
  return [
    a.line1,
    ...(a.line2 ? [a.line2] : []),
    `${a.postal_code} ${a.city}${a.region ? `, ${a.region}` : ''}`,
    a.country,
  ];
}

/** MAIL_FROM is `a@b` or `Name <a@b>` (shared/config.ts checks it). */
function splitMailbox(v: string): { name: string; address: string } {
  const m = /^(.*)<([^<>]+)>\s*$/.exec(v);
  return m ? { name: m[1]!.trim().replace(/^"(.*)"$/, '$1'), address: m[2]!.trim() } : { name: '', address: v.trim() };
}
