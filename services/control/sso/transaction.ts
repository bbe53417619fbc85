import { randomBytes } from 'node:crypto';
import { deriveKey, seal, unseal } from '../../../shared/secret.js';

/** What the callback must find again: the checks of one sign-in attempt (docs/sso.md). */
export interface SsoTransaction {
  state: string;
  nonce: string;
  /** The PKCE code verifier (RFC 7636): only this browser's callback can redeem the code. */
  verifier: string;
  /** Where the browser goes once signed in: the authorization request it came from, or the console. */
  returnTo: string;
  /** Epoch seconds. */
  expiresAt: number;
}

export const TRANSACTION_TTL_SECONDS = 600;

const random = () => randomBytes(32).toString('base64url');

/**
 * The transaction rides in a cookie sealed (AES-GCM) with a key derived from SECRET_KEY: the browser can neither
 * read the verifier nor forge a state, and nothing is stored server-side. The code itself is single-use at the
 * provider, so a replayed callback (same cookie, same code) is refused there.
 */
export class SsoTransactions {
  readonly cookieName: string;
  private readonly key: Buffer;
  private readonly attributes: string;

  constructor(secret: Buffer, secure: boolean) {
    this.key = deriveKey(secret, 'sso-transaction');
    this.cookieName = secure ? '__Host-meterline_sso' : 'meterline_sso';
    this.attributes = secure ? 'Path=/; HttpOnly; SameSite=Lax; Secure' : 'Path=/console/sso; HttpOnly; SameSite=Lax';
  }

  begin(returnTo: string, now = Date.now()): { transaction: SsoTransaction; setCookie: string } {
    const transaction = {
      state: random(),
      nonce: random(),
      verifier: random(),
      returnTo,
      expiresAt: Math.floor(now / 1000) + TRANSACTION_TTL_SECONDS,
    };
    const value = seal(this.key, JSON.stringify(transaction));
    return {
      transaction,
      setCookie: `${this.cookieName}=${value}; ${this.attributes}; Max-Age=${TRANSACTION_TTL_SECONDS}`,
    };
  }

  /** This browser's live transaction, or null (no cookie, tampered, or expired). */
  read(cookieHeader: string | undefined, now = Date.now()): SsoTransaction | null {
    const value = cookieValue(cookieHeader, this.cookieName);
    if (!value) return null;
    try {
      const t = JSON.parse(unseal(this.key, value)) as SsoTransaction;
      return t.expiresAt > now / 1000 ? t : null;
    } catch {
      return null;
    }
  }

  clear(): string {
    return `${this.cookieName}=; ${this.attributes}; Max-Age=0`;
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Where a signed-in browser may be sent: back to this server's authorization endpoint or the console, never
 * elsewhere (no open redirect).
 */
export function safeReturnTo(raw: string | null): string {
  if (!raw || raw.includes('\\') || raw.startsWith('//')) return '/console';
  return /^\/(oauth\/authorize\?|console(\?|$))/.test(raw) ? raw : '/console';
}
