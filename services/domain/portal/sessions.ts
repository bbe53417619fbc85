import type { PgPool } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { looksLikeToken, newCardLinkToken, tokenHash } from '../hosted-pages/tokens.js';
import {
  findLivePortalSession,
  findPortalSessionByLink,
  insertPortalSession,
  openPortalSession,
  type PortalSessionRow,
} from './sessions-store.js';

/**
 * Customer portal sessions (docs/portal.md): an operator's short-lived, single-customer link that signs the customer
 * into the portal without a password. The link's token and the browser's cookie are 256 random bits each; only
 * their SHA-256 is stored, so a copy of the database opens nothing. A link opens once: opening it exchanges it for
 * the cookie, and the link is spent.
 */

export interface NewPortalSession {
  id: string;
  url: string;
  expires_at: Date;
}

export async function createPortalSession(
  pg: PgPool,
  o: { baseUrl: string; accountId: string; returnUrl: string; locale: string | null; ttlSeconds: number; now: Date },
): Promise<NewPortalSession> {
  const token = newCardLinkToken();
  const id = newId('pts');
  const expiresAt = new Date(o.now.getTime() + o.ttlSeconds * 1000);
  await insertPortalSession(pg, {
    id,
    accountId: o.accountId,
    linkHash: tokenHash(token),
    returnUrl: o.returnUrl,
    locale: o.locale,
    now: o.now,
    expiresAt,
  });
  return { id, url: `${o.baseUrl}/portal/start/${token}`, expires_at: expiresAt };
}

export type LinkOpening =
  | { state: 'opened'; session: PortalSessionRow; cookie: string }
  | { state: 'used' | 'expired'; session: PortalSessionRow }
  | { state: 'not_found' };

/**
 * Exchanges a link's token for a browser session lasting `ttlSeconds`: the cookie value is in this answer only.
 * A link opened before → used; past its expiry → expired; anything else → not found.
 */
export async function openPortalLink(pg: PgPool, token: string, now: Date, ttlSeconds: number): Promise<LinkOpening> {
  if (!looksLikeToken(token)) return { state: 'not_found' };
  const cookie = newCardLinkToken();
  const hash = tokenHash(token);
  const session = await openPortalSession(
    pg,
    hash,
    tokenHash(cookie),
    now,
    new Date(now.getTime() + ttlSeconds * 1000),
  );
  if (session) return { state: 'opened', session, cookie };
  const known = await findPortalSessionByLink(pg, hash);
  if (!known) return { state: 'not_found' };
  return { state: known.opened_at ? 'used' : 'expired', session: known };
}

/** The live portal session a browser's cookie belongs to, or null. */
export async function portalSessionOfCookie(pg: PgPool, cookie: string | undefined, now: Date) {
  if (!cookie || !looksLikeToken(cookie)) return null;
  return findLivePortalSession(pg, tokenHash(cookie), now);
}
