import type { PgPool } from '../../../shared/clients/postgres.js';
import { hasPrefix } from '../../../shared/ids.js';
import { changeInvoiceLink, findCardLink, insertCardLink, invoiceLinkStates, type InvoiceLinkState } from './store.js';
import { invoiceLinkToken, looksLikeToken, newCardLinkToken, sameToken, tokenHash, type HostedKey } from './tokens.js';

/**
 * The hosted pages' links (docs/payments.md "Hosted pages"): who may open which page, with no sign-in. An invoice's
 * link is `<base>/hosted/invoices/<invoice id>/<token>`; a card page's `<base>/hosted/cards/<token>`.
 */

/** What building a hosted link needs: the hosted pages' key and the deployment's PUBLIC_BASE_URL. */
export interface HostedLinks {
  key: HostedKey;
  baseUrl: string;
}

/** How long a card page link works. */
export const CARD_LINK_TTL_MS = 7 * 86_400_000;

/** Only finalized invoices have a hosted page; a draft can still change. */
const hasHostedPage = (status: string) => status !== 'draft';

export function hostedInvoiceUrl(key: HostedKey, baseUrl: string, invoiceId: string, generation = 0): string {
  return `${baseUrl}/hosted/invoices/${invoiceId}/${invoiceLinkToken(key, invoiceId, generation)}`;
}

/** The hosted_invoice_url of each invoice: null for a draft or a revoked link. */
export async function hostedInvoiceUrls(
  pg: PgPool,
  key: HostedKey,
  baseUrl: string,
  invoices: readonly { id: string; status: string }[],
): Promise<Map<string, string | null>> {
  const finalized = invoices.filter((i) => hasHostedPage(i.status));
  const states = await invoiceLinkStates(
    pg,
    finalized.map((i) => i.id),
  );
  return new Map(
    invoices.map((i) => {
      const s = states.get(i.id);
      return [i.id, s && !s.revoked ? hostedInvoiceUrl(key, baseUrl, i.id, s.generation) : null];
    }),
  );
}

/** `gone` names the account of the link that did exist, so its page can be in the customer's language. */
export type LinkCheck =
  | { state: 'ok'; accountId: string }
  | { state: 'gone'; accountId: string }
  | { state: 'not_found' };

/**
 * Whether `token` opens the invoice's page: the current generation's token of a live link → ok; a revoked link's
 * or an earlier generation's → gone (410: it did exist); anything else → not found, exactly like an unknown invoice.
 */
export async function checkInvoiceLink(
  pg: PgPool,
  key: HostedKey,
  invoice: { id: string; status: string; account_id: string } | null,
  token: string,
): Promise<LinkCheck> {
  if (!invoice || !hasPrefix(invoice.id, 'inv') || !hasHostedPage(invoice.status) || !looksLikeToken(token))
    return { state: 'not_found' };
  const s: InvoiceLinkState = (await invoiceLinkStates(pg, [invoice.id])).get(invoice.id)!;
  if (sameToken(token, invoiceLinkToken(key, invoice.id, s.generation)))
    return s.revoked
      ? { state: 'gone', accountId: invoice.account_id }
      : { state: 'ok', accountId: invoice.account_id };
  for (let g = 0; g < s.generation; g++)
    if (sameToken(token, invoiceLinkToken(key, invoice.id, g))) return { state: 'gone', accountId: invoice.account_id };
  return { state: 'not_found' };
}

/** An operator revokes or rotates an invoice's link; the invoice's hosted_invoice_url afterwards (null: revoked). */
export async function changeHostedInvoiceLink(
  pg: PgPool,
  key: HostedKey,
  baseUrl: string,
  invoiceId: string,
  change: 'rotate' | 'revoke',
  now: Date,
): Promise<string | null> {
  const s = await changeInvoiceLink(pg, invoiceId, change, now);
  return s.revoked ? null : hostedInvoiceUrl(key, baseUrl, invoiceId, s.generation);
}

/** A new card page link for the account (its earlier ones stop working); the URL is shown only now. */
export async function mintCardLink(
  pg: PgPool,
  baseUrl: string,
  accountId: string,
  now: Date,
): Promise<{ id: string; url: string; expires_at: Date }> {
  const token = newCardLinkToken();
  const expiresAt = new Date(now.getTime() + CARD_LINK_TTL_MS);
  const { id } = await insertCardLink(pg, accountId, tokenHash(token), now, expiresAt);
  return { id, url: `${baseUrl}/hosted/cards/${token}`, expires_at: expiresAt };
}

/** The account a card page token opens; expired or revoked → gone; unknown → not found. */
export async function checkCardLink(pg: PgPool, token: string, now: Date): Promise<LinkCheck> {
  if (!looksLikeToken(token)) return { state: 'not_found' };
  const link = await findCardLink(pg, tokenHash(token));
  if (!link) return { state: 'not_found' };
  if (link.revoked || link.expires_at <= now) return { state: 'gone', accountId: link.account_id };
  return { state: 'ok', accountId: link.account_id };
}
