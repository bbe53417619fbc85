import { SignJWT, jwtVerify, decodeProtectedHeader, errors as joseErrors, type CryptoKey } from 'jose';
import { randomBytes } from 'node:crypto';
import { UnauthorizedError } from '../errors.js';
import { isScope, type Authenticator, type Principal, type Scope } from './types.js';
import { JWT_ALG, type ActiveKey } from './signing-keys.js';
import { isOperatorRole, type OperatorRole } from './roles.js';

export interface AccessTokenClaims {
  accountId: string;
  userId: string;
  clientId: string;
  scopes: readonly Scope[];
  /** The user's operator role (`role` claim); none for a customer's people (services/domain/accounts/roles.ts). */
  role?: OperatorRole | null;
}

export interface IssuedAccessToken {
  token: string;
  jti: string;
  expiresIn: number;
  /** Unix seconds. */
  expiresAt: number;
}

/** What signs tokens (SigningKeys, or an in-memory key in benches and unit tests). */
export interface SigningKeySource {
  signingKey(): ActiveKey;
}

/** What verifies them: public keys by `kid`, held in memory. */
export interface VerificationKeySource {
  publicKey(kid: string): Promise<CryptoKey | undefined> | CryptoKey | undefined;
}

/**
 * Signs an RFC 9068-style access token `{iss, sub (account), aud, uid, client_id, scope, iat, exp, jti}`
 * with the active Ed25519 key (header: `typ: at+jwt`, `kid`). The audience is the issuer: the API
 * and the authorization server share one base URL.
 */
export async function issueAccessToken(
  keys: SigningKeySource,
  claims: AccessTokenClaims,
  opts: { issuer: string; ttlSeconds: number; now?: number },
): Promise<IssuedAccessToken> {
  const { kid, privateKey } = keys.signingKey();
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const jti = randomBytes(16).toString('base64url');
  const exp = now + opts.ttlSeconds;
  const token = await new SignJWT({
    uid: claims.userId,
    client_id: claims.clientId,
    scope: claims.scopes.join(' '),
    ...(claims.role ? { role: claims.role } : {}),
  })
    .setProtectedHeader({ alg: JWT_ALG, kid, typ: 'at+jwt' })
    .setIssuer(opts.issuer)
    .setSubject(claims.accountId)
    .setAudience(opts.issuer)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(privateKey);
  return { token, jti, expiresIn: opts.ttlSeconds, expiresAt: exp };
}

/** Revoked token ids (jti), replicated in memory (shared/auth/revocations.ts). */
export interface RevocationList {
  isRevoked(jti: string): boolean;
  health?(): { ok: boolean; detail?: string };
}

const NO_REVOCATIONS: RevocationList = { isRevoked: () => false };
const DEFAULT_CACHE_LIMIT = 10_000;
const CACHE_KEY_CHARS = 32;

/**
 * The one token check shared by ingress and control plane: verifies signature, issuer, audience,
 * expiry and revocation without a database. Verified principals are cached (bounded, oldest evicted
 * first), so the hot path pays one map lookup, a string comparison, an expiry comparison and a
 * revocation lookup; the signature is checked once per token per process.
 */
export class JwtAuthenticator implements Authenticator {
  /**
   * Keyed by the header's last CACHE_KEY_CHARS characters (the tail of the Ed25519 signature: 192
   * random bits), so a lookup hashes a few dozen characters instead of the whole ~600-character header;
   * the full header must then be identical, so a forged token can never ride on a cached one.
   */
  private readonly cache = new Map<string, { header: string; principal: Principal }>();

  constructor(
    private readonly keys: VerificationKeySource,
    private readonly issuer: string,
    private readonly revocations: RevocationList = NO_REVOCATIONS,
    private readonly cacheLimit = DEFAULT_CACHE_LIMIT,
    /** Milliseconds since the epoch; injectable so tests can move time. */
    private readonly now: () => number = Date.now,
  ) {}

  health(): { ok: boolean; detail?: string } {
    return this.revocations.health?.() ?? { ok: true };
  }

  get cacheSize(): number {
    return this.cache.size;
  }

  authenticate(header: string | undefined): Principal | Promise<Principal> {
    const principal = this.cached(header);
    if (principal !== undefined) {
      if (principal.expiresAt * 1000 <= this.now()) {
        this.cache.delete(header!.slice(-CACHE_KEY_CHARS));
        throw new UnauthorizedError('The access token expired.', 'invalid_token');
      }
      if (this.revocations.isRevoked(principal.tokenId))
        throw new UnauthorizedError('The access token was revoked.', 'invalid_token');
      return principal;
    }
    // RFC 6750 §3.1: a request without bearer credentials gets a bare challenge, no error code.
    if (!header || !/^bearer(?: |$)/i.test(header))
      throw new UnauthorizedError('A bearer token is required (Authorization: Bearer <access token>).');
    const token = header.slice(7).trim();
    if (!token) throw new UnauthorizedError('The bearer token is empty.', 'invalid_request');
    return this.verify(header, token);
  }

  verifiedAccount(header: string | undefined): string | undefined {
    const principal = this.cached(header);
    if (principal === undefined || principal.expiresAt * 1000 <= this.now()) return undefined;
    try {
      return this.revocations.isRevoked(principal.tokenId) ? undefined : principal.accountId;
    } catch {
      // Revocations cannot be confirmed (a broken watch): not vouched for now — the authenticate step answers 503.
      // Called as a request arrives, outside the pipeline's error mapping: a throw here would end the process.
      return undefined;
    }
  }

  /** The principal of exactly this header when it was verified before (expiry and revocation not checked). */
  private cached(header: string | undefined): Principal | undefined {
    if (!header || header.length <= CACHE_KEY_CHARS) return undefined;
    const cached = this.cache.get(header.slice(-CACHE_KEY_CHARS));
    return cached !== undefined && cached.header === header ? cached.principal : undefined;
  }

  private async verify(header: string, token: string): Promise<Principal> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw new UnauthorizedError('The access token is malformed.', 'invalid_token');
    }
    const key = kid ? await this.keys.publicKey(kid) : undefined;
    if (!key) throw new UnauthorizedError('The access token is not signed by a known key.', 'invalid_token');
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        issuer: this.issuer,
        audience: this.issuer,
        algorithms: [JWT_ALG],
        typ: 'at+jwt',
        requiredClaims: ['exp', 'jti', 'sub'],
        currentDate: new Date(this.now()),
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired)
        throw new UnauthorizedError('The access token expired.', 'invalid_token');
      // Signed by our key (jose authenticates before it checks claims) for another base URL: say which, since
      // that is what went wrong (a token issued with another PUBLIC_BASE_URL), and neither URL is a secret.
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'iss')
        throw new UnauthorizedError(
          `The access token was issued for another server: issuer ${String(err.payload.iss)} is not this server's (${this.issuer}).`,
          'invalid_token',
        );
      throw new UnauthorizedError('The access token is invalid.', 'invalid_token');
    }
    if (
      !payload.sub ||
      typeof payload.uid !== 'string' ||
      typeof payload.client_id !== 'string' ||
      typeof payload.jti !== 'string' ||
      typeof payload.exp !== 'number'
    ) {
      throw new UnauthorizedError('The access token lacks required claims.', 'invalid_token');
    }
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(isScope) : [];
    const principal: Principal = {
      accountId: payload.sub,
      userId: payload.uid,
      clientId: payload.client_id,
      scopes,
      tokenId: payload.jti,
      expiresAt: payload.exp,
    };
    // A role the server doesn't know (a token of a newer release) restricts the most: support reads only.
    if (payload.role !== undefined) principal.role = isOperatorRole(payload.role) ? payload.role : 'support';
    if (this.revocations.isRevoked(principal.tokenId))
      throw new UnauthorizedError('The access token was revoked.', 'invalid_token');
    const cacheKey = header.slice(-CACHE_KEY_CHARS);
    if (!this.cache.has(cacheKey) && this.cache.size >= this.cacheLimit)
      this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, { header, principal });
    return principal;
  }
}
