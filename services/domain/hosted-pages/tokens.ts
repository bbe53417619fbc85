import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../../../shared/secret.js';

/**
 * The secrets in hosted page links (docs/payments.md "Hosted pages"). Both kinds carry 256 bits no one can guess
 * and neither is kept in the database in a usable form:
 * - an invoice's link token is HMAC-SHA256(key, "invoice:<id>:<generation>"), so the invoice resource can show its
 *   link at any time without storing it; rotating moves to the next generation, which changes the token;
 * - a card page link is random, shown once when made; only its SHA-256 is stored (hosted_card_links).
 */
export type HostedKey = Buffer & { readonly __hostedKey: unique symbol };

/** The hosted pages' own sub-key of SECRET_KEY: a leak of another derived key exposes no link. */
export function hostedKey(secretKey: Buffer): HostedKey {
  return deriveKey(secretKey, 'hosted-pages') as HostedKey;
}

export function invoiceLinkToken(key: HostedKey, invoiceId: string, generation: number): string {
  return createHmac('sha256', key).update(`invoice:${invoiceId}:${generation}`).digest('base64url');
}

/** Constant-time comparison of a presented token with the expected one (no early exit on the first wrong byte). */
export function sameToken(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A fresh card page token: 32 random bytes, base64url. */
export function newCardLinkToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a card page token, and what a presented token is looked up by. */
export function tokenHash(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A token as it appears in a URL: base64url of 32 bytes. Anything else is refused before any query. */
export function looksLikeToken(s: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(s);
}

/** A checkout session's link token: HMAC-SHA256(key, "checkout:<id>"), so the session can show its URL at any time. */
export function checkoutLinkToken(key: HostedKey, sessionId: string): string {
  return createHmac('sha256', key).update(`checkout:${sessionId}`).digest('base64url');
}
