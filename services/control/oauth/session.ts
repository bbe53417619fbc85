import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { deriveKey } from '../../../shared/secret.js';
import { hashOpaqueToken, newOpaqueToken } from '../../../shared/auth/opaque-tokens.js';
import type { User } from '../../domain/accounts/users-store.js';
import { deleteSession, insertSession, sessionUser } from '../../domain/oauth/sessions-store.js';
import { SESSION_TTL_SECONDS } from './context.js';

export type CsrfPurpose = 'sign-in' | 'consent';

/**
 * Browser sessions of the authorization pages. The cookie holds 256 random bits: before sign-in it
 * only anchors the CSRF token of the sign-in form (nothing stored); signing in issues a NEW value
 * (no session fixation) whose hash maps to the user in Postgres. The cookie is HttpOnly,
 * SameSite=Lax, and on https Secure with the __Host- prefix.
 *
 * CSRF tokens are HMAC(key, purpose + cookie): a page on another site can neither read the cookie
 * nor compute the token, and a token for one cookie is worthless with another.
 */
export class Sessions {
  readonly cookieName: string;
  private readonly csrfKey: Buffer;
  private readonly cookieAttributes: string;

  constructor(
    private readonly pg: PgPool,
    secret: Buffer,
    secure: boolean,
  ) {
    this.csrfKey = deriveKey(secret, 'oauth-csrf');
    this.cookieName = secure ? '__Host-meterline_session' : 'meterline_session';
    this.cookieAttributes = secure ? 'Path=/; HttpOnly; SameSite=Lax; Secure' : 'Path=/oauth; HttpOnly; SameSite=Lax';
  }

  /** The session cookie's value, if the browser sent a well-formed one. */
  cookie(cookieHeader: string | undefined): string | undefined {
    if (!cookieHeader) return undefined;
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq === -1 || part.slice(0, eq).trim() !== this.cookieName) continue;
      const value = part.slice(eq + 1).trim();
      if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
    }
    return undefined;
  }

  /** A fresh anonymous cookie for the sign-in form. */
  anonymous(): { value: string; setCookie: string } {
    const value = newOpaqueToken();
    return { value, setCookie: `${this.cookieName}=${value}; ${this.cookieAttributes}` };
  }

  /** The signed-in user of this cookie, or null. */
  async user(cookie: string | undefined): Promise<User | null> {
    if (!cookie) return null;
    return sessionUser(this.pg, hashOpaqueToken(cookie));
  }

  /** Starts a signed-in session under a new cookie value; the old (anonymous) one is dropped. */
  async signIn(user: User, previous: string | undefined): Promise<{ value: string; setCookie: string }> {
    const value = newOpaqueToken();
    await insertSession(this.pg, hashOpaqueToken(value), user.id, SESSION_TTL_SECONDS);
    if (previous) await deleteSession(this.pg, hashOpaqueToken(previous));
    return {
      value,
      setCookie: `${this.cookieName}=${value}; ${this.cookieAttributes}; Max-Age=${SESSION_TTL_SECONDS}`,
    };
  }

  csrfToken(cookie: string, purpose: CsrfPurpose): string {
    return createHmac('sha256', this.csrfKey).update(`${purpose}\n${cookie}`).digest('base64url');
  }

  csrfValid(cookie: string | undefined, purpose: CsrfPurpose, token: unknown): boolean {
    if (!cookie || typeof token !== 'string') return false;
    const expected = Buffer.from(this.csrfToken(cookie, purpose));
    const given = Buffer.from(token);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
