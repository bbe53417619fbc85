import { checkoutLinkToken, looksLikeToken, sameToken, type HostedKey } from '../hosted-pages/tokens.js';
import type { CheckoutSessionRow } from './types.js';

/** A checkout page's URL: `<base>/hosted/checkout/<session id>/<token>`, the token derived from the id (tokens.ts). */
export function checkoutUrl(key: HostedKey, baseUrl: string, sessionId: string): string {
  return `${baseUrl}/hosted/checkout/${sessionId}/${checkoutLinkToken(key, sessionId)}`;
}

/** Where the customer goes once subscribed: success_url with `session_id` added to its query. */
export function successRedirect(s: Pick<CheckoutSessionRow, 'id' | 'success_url'>): string {
  const u = new URL(s.success_url);
  u.searchParams.set('session_id', s.id);
  return u.toString();
}

/** Whether `token` opens the session's page (constant-time; a malformed token is refused before any work). */
export function checkoutTokenOpens(key: HostedKey, sessionId: string, token: string): boolean {
  return looksLikeToken(token) && sameToken(token, checkoutLinkToken(key, sessionId));
}
