import { createHmac } from 'node:crypto';
import type { ApiDeps } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import type { Principal } from '../../../shared/auth/types.js';
import { deriveKey } from '../../../shared/secret.js';
import { withAuditActor } from '../../../shared/audit/actor.js';
import { portalSessionOfCookie } from '../../domain/portal/sessions.js';
import type { PortalSessionRow } from '../../domain/portal/sessions-store.js';
import { sameToken } from '../../domain/hosted-pages/tokens.js';
import { legalDetails } from '../../domain/invoices/store.js';
import type { Locale } from '../../domain/invoices/invoice-texts.js';
import { portalLocale } from '../../domain/portal/portal-texts.js';

/**
 * Who a portal request is (docs/portal.md): the browser's portal cookie names one live portal session, hence one
 * customer. Everything the portal shows or does runs as that customer (a read/write principal of its account, never
 * admin), so every route rule that keeps a customer to its own data keeps the portal to it too.
 */
export const PORTAL_COOKIE = 'meterline_portal';

/** HttpOnly, SameSite=Lax, only under /portal; Secure when the deployment is served over https. */
export function portalCookie(deps: ApiDeps, value: string, maxAgeSeconds: number): string {
  const secure = deps.config.PUBLIC_BASE_URL.startsWith('https:') ? '; Secure' : '';
  return `${PORTAL_COOKIE}=${value}; Path=/portal; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

export function cookieOf(ctx: RequestContext): string | undefined {
  for (const part of (ctx.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === PORTAL_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface PortalVisit {
  session: PortalSessionRow;
  principal: Principal;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  /** The language of its pages: the session's when supported, else the customer's (portal-texts.ts). */
  locale: Locale;
}

/** The visit of this request's cookie, or null (no cookie, an unknown one, or its session ended). */
export async function portalVisit(deps: ApiDeps, ctx: RequestContext): Promise<PortalVisit | null> {
  const cookie = cookieOf(ctx);
  const session = await portalSessionOfCookie(deps.pg, cookie, new Date());
  if (!session || !cookie) return null;
  const customerLocale = session.locale ? null : (await legalDetails(deps.pg, session.account_id)).locale;
  return {
    locale: portalLocale(session.locale, customerLocale),
    session,
    principal: {
      accountId: session.account_id,
      userId: '',
      clientId: 'portal',
      scopes: ['read', 'write'],
      tokenId: session.id,
      expiresAt: Math.floor(session.session_expires_at!.getTime() / 1000),
    },
    csrf: csrfToken(deps, cookie),
  };
}

/** HMAC of the cookie under the portal's own sub-key: another site can neither read the cookie nor make this. */
function csrfToken(deps: ApiDeps, cookie: string): string {
  return createHmac('sha256', deriveKey(deps.config.SECRET_KEY, 'portal-csrf')).update(cookie).digest('base64url');
}

export function csrfValid(visit: PortalVisit, given: unknown): boolean {
  return typeof given === 'string' && sameToken(given, visit.csrf);
}

/** A portal write runs as the customer it signs in, named in the audit log with the portal session. */
export function asPortalCustomer<T>(visit: PortalVisit, ctx: RequestContext, operation: string, fn: () => T): T {
  return withAuditActor(
    {
      type: 'public',
      account_id: visit.session.account_id,
      name: `portal session ${visit.session.id}`,
      address: ctx.clientAddress,
      request_id: ctx.requestId,
      operation,
    },
    fn,
  );
}
