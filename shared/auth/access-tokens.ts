import { SignJWT, jwtVerify, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { randomBytes } from 'node:crypto';
import { UnauthorizedError } from '../errors.js';
import { SCOPES, type Authenticator, type Principal, type Scope } from './types.js';
import { JWT_ALG, type SigningKeys } from './signing-keys.js';

export interface AccessTokenClaims {
  accountId: string;
  userId: string;
  clientId: string;
  scopes: readonly Scope[];
}

export interface IssuedAccessToken {
  token: string;
  jti: string;
  expiresIn: number;
  expiresAt: number;
}

/** Signs `{sub, uid, client_id, scope, exp, jti}` with the active Ed25519 key (header carries `kid`). */
export async function issueAccessToken(keys: SigningKeys, claims: AccessTokenClaims, opts: { issuer: string; ttlSeconds: number; now?: number }): Promise<IssuedAccessToken> {
  const { kid, privateKey } = keys.signingKey();
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const jti = randomBytes(16).toString('base64url');
  const exp = now + opts.ttlSeconds;
  const token = await new SignJWT({ uid: claims.userId, client_id: claims.clientId, scope: claims.scopes.join(' ') })
    .setProtectedHeader({ alg: JWT_ALG, kid, typ: 'at+jwt' })
    .setIssuer(opts.issuer)
    .setSubject(claims.accountId)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(privateKey);
  return { token, jti, expiresIn: opts.ttlSeconds, expiresAt: exp };
}

/** Revoked token ids (jti), replicated in memory; see the OAuth revocation list. */
export interface RevocationList {
  isRevoked(jti: string): boolean;
}

const NO_REVOCATIONS: RevocationList = { isRevoked: () => false };
const CACHE_LIMIT = 10_000;

/**
 * The one token check shared by ingress and control plane: verifies signature, issuer, expiry and
 * revocation without a database. Verified tokens are cached (bounded) so the hot path pays a map lookup.
 */
export class JwtAuthenticator implements Authenticator {
  private readonly cache = new Map<string, Principal>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly issuer: string,
    private readonly revocations: RevocationList = NO_REVOCATIONS,
  ) {}

  authenticate(header: string | undefined): Principal | Promise<Principal> {
    if (!header) throw new UnauthorizedError('A bearer token is required.');
    if (header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') throw new UnauthorizedError('Use the Bearer authorization scheme.', 'invalid_request');
    const token = header.slice(7).trim();
    const cached = this.cache.get(token);
    if (cached) {
      if (cached.expiresAt * 1000 <= Date.now()) {
        this.cache.delete(token);
        throw new UnauthorizedError('The access token expired.', 'invalid_token');
      }
      if (this.revocations.isRevoked(cached.tokenId)) throw new UnauthorizedError('The access token was revoked.', 'invalid_token');
      return cached;
    }
    return this.verify(token);
  }

  private async verify(token: string): Promise<Principal> {
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
      ({ payload } = await jwtVerify(token, key, { issuer: this.issuer, algorithms: [JWT_ALG], typ: 'at+jwt' }));
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired;
      throw new UnauthorizedError(expired ? 'The access token expired.' : 'The access token is invalid.', 'invalid_token');
    }
    const scopes = String(payload.scope ?? '').split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    if (!payload.sub || typeof payload.uid !== 'string' || typeof payload.client_id !== 'string' || !payload.jti || !payload.exp) {
      throw new UnauthorizedError('The access token lacks required claims.', 'invalid_token');
    }
    const principal: Principal = { accountId: payload.sub, userId: payload.uid, clientId: payload.client_id, scopes, tokenId: payload.jti, expiresAt: payload.exp };
    if (this.revocations.isRevoked(principal.tokenId)) throw new UnauthorizedError('The access token was revoked.', 'invalid_token');
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(token, principal);
    return principal;
  }
}
