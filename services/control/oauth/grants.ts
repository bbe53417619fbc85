import { errors as joseErrors, decodeProtectedHeader, jwtVerify } from 'jose';
import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { issueAccessToken } from '../../../shared/auth/access-tokens.js';
import { operatorRoleOf } from '../../domain/accounts/roles.js';
import { JWT_ALG } from '../../../shared/auth/signing-keys.js';
import { hashOpaqueToken, newOpaqueToken } from '../../../shared/auth/opaque-tokens.js';
import { verifierMatches, CODE_VERIFIER } from '../../../shared/auth/pkce.js';
import { formatScopes, isScope, parseScopeParam, scopesCover, type Scope } from '../../../shared/auth/types.js';
import type { Revocation } from '../../../shared/auth/revocations.js';
import { newId } from '../../../shared/ids.js';
import type { OAuthClient } from '../../domain/accounts/clients-store.js';
import type { User } from '../../domain/accounts/users-store.js';
import {
  insertAccessToken,
  insertAuthorizationCode,
  insertGrant,
  insertRefreshToken,
  lockAuthorizationCode,
  lockRefreshToken,
  markCodeRedeemed,
  markRefreshTokenRotated,
  recordRevokedAccessToken,
  revokeGrant,
  setCodeGrant,
  type CodeRow,
} from '../../domain/oauth/tokens-store.js';
import { AUTHORIZATION_CODE_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS, type OAuthContext } from './context.js';
import { invalidGrant, OAuthError } from './errors.js';

/** RFC 6749 §5.1 successful token response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

interface Grant {
  id: string;
  accountId: string;
  userId: string;
  clientId: string;
  scopes: Scope[];
}

const toScopes = (raw: string[]): Scope[] => raw.filter(isScope);

// ── authorization codes ────────────────────────────────────────────────────────────────────────

export interface CodeRequest {
  client: OAuthClient;
  user: User;
  redirectUri: string;
  redirectUriInRequest: boolean;
  scopes: readonly Scope[];
  codeChallenge: string | null;
}

/** Stores a code (hashed) valid for 60 s and returns it; the database enforces the bound. */
export async function createAuthorizationCode(ctx: OAuthContext, req: CodeRequest): Promise<string> {
  const code = newOpaqueToken();
  await insertAuthorizationCode(ctx.pg, {
    codeHash: hashOpaqueToken(code),
    clientId: req.client.id,
    accountId: req.user.accountId,
    userId: req.user.id,
    redirectUri: req.redirectUri,
    redirectUriInRequest: req.redirectUriInRequest,
    scopes: [...req.scopes],
    codeChallenge: req.codeChallenge,
    ttlSeconds: AUTHORIZATION_CODE_TTL_SECONDS,
  });
  return code;
}

/**
 * authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6). The code row is locked, so concurrent
 * redemptions serialize: the first one marks it redeemed (whatever the outcome: a code is good for one
 * attempt), a later one finds it redeemed and revokes the grant the first one created (RFC 6749 §4.1.2).
 */
export async function redeemAuthorizationCode(
  ctx: OAuthContext,
  client: OAuthClient,
  input: { code: string; redirectUri: string | undefined; codeVerifier: string | undefined },
): Promise<TokenResponse> {
  const outcome = await withTransaction(
    ctx.pg,
    async (c): Promise<{ tokens: TokenResponse } | { error: OAuthError; revoked?: Revocation[] }> => {
      const codeHash = hashOpaqueToken(input.code);
      const row = await lockAuthorizationCode(c, codeHash);
      if (!row) return { error: invalidGrant('The authorization code is invalid.') };
      if (row.redeemed_at) {
        const revoked = row.grant_id ? await revokeGrant(c, row.grant_id, 'code_replay') : [];
        return {
          error: invalidGrant('The authorization code was already used; the tokens issued for it are revoked.'),
          revoked,
        };
      }
      await markCodeRedeemed(c, codeHash);
      const problem = codeProblem(row, client, input);
      if (problem) return { error: problem };
      const grant = await createGrant(c, {
        accountId: row.account_id,
        userId: row.user_id,
        clientId: client.id,
        scopes: toScopes(row.scopes),
      });
      await setCodeGrant(c, codeHash, grant.id);
      return { tokens: await issueTokenPair(c, ctx, grant, grant.scopes, null) };
    },
  );
  if ('tokens' in outcome) return outcome.tokens;
  if (outcome.revoked?.length) await ctx.revocations.publish(outcome.revoked);
  throw outcome.error;
}

function codeProblem(
  row: CodeRow,
  client: OAuthClient,
  input: { redirectUri: string | undefined; codeVerifier: string | undefined },
): OAuthError | null {
  if (row.expired) return invalidGrant('The authorization code expired (codes are valid for 60 seconds).');
  if (row.client_id !== client.id) return invalidGrant('The authorization code was issued to another client.');
  if (input.redirectUri !== undefined ? input.redirectUri !== row.redirect_uri : row.redirect_uri_in_request) {
    return invalidGrant('redirect_uri does not match the one of the authorization request.');
  }
  if (row.code_challenge) {
    if (input.codeVerifier === undefined)
      return invalidGrant('code_verifier is required: the authorization request carried a code_challenge.');
    if (!CODE_VERIFIER.test(input.codeVerifier))
      return invalidGrant('code_verifier must be 43–128 characters of [A-Za-z0-9-._~].');
    if (!verifierMatches(input.codeVerifier, row.code_challenge))
      return invalidGrant('code_verifier does not match the code_challenge.');
  } else if (input.codeVerifier !== undefined) {
    // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a PKCE downgrade attempt.
    return invalidGrant('code_verifier was sent but the authorization request carried no code_challenge.');
  }
  return null;
}

// ── refresh tokens ─────────────────────────────────────────────────────────────────────────────

/**
 * refresh_token grant (RFC 6749 §6) with rotation (RFC 9700 §4.14.2): every use returns a new refresh
 * token; presenting one that was already rotated means two parties hold it, so the whole grant is
 * revoked. `scope` may narrow the access token, never widen it; the new refresh token keeps the grant's.
 */
export async function refreshTokens(
  ctx: OAuthContext,
  client: OAuthClient,
  input: { refreshToken: string; scope: string | undefined },
): Promise<TokenResponse> {
  const outcome = await withTransaction(
    ctx.pg,
    async (c): Promise<{ tokens: TokenResponse } | { error: OAuthError; revoked?: Revocation[] }> => {
      const row = await lockRefreshToken(c, hashOpaqueToken(input.refreshToken));
      if (!row) return { error: invalidGrant('The refresh token is invalid.') };
      if (row.client_id !== client.id)
        return { error: invalidGrant('The refresh token was issued to another client.') };
      if (row.grant_revoked_at || row.token_revoked_at)
        return { error: invalidGrant('The refresh token was revoked.') };
      if (row.rotated_at) {
        const revoked = await revokeGrant(c, row.grant_id, 'refresh_token_reuse');
        return { error: invalidGrant('The refresh token was already used; the grant is revoked.'), revoked };
      }
      if (row.expired) return { error: invalidGrant('The refresh token expired.') };
      const grant: Grant = {
        id: row.grant_id,
        accountId: row.account_id,
        userId: row.user_id,
        clientId: row.client_id,
        scopes: toScopes(row.scopes),
      };
      let accessScopes = grant.scopes;
      if (input.scope !== undefined && input.scope !== '') {
        const parsed = parseScopeParam(input.scope);
        if ('unknown' in parsed)
          return { error: new OAuthError('invalid_scope', `Unknown scope "${parsed.unknown}".`) };
        const beyond = parsed.scopes.find((s) => !scopesCover(grant.scopes, s));
        if (beyond)
          return {
            error: new OAuthError(
              'invalid_scope',
              `The scope "${beyond}" exceeds what was granted (${formatScopes(grant.scopes)}).`,
            ),
          };
        if (parsed.scopes.length) accessScopes = parsed.scopes;
      }
      await markRefreshTokenRotated(c, row.id);
      return { tokens: await issueTokenPair(c, ctx, grant, accessScopes, row.id) };
    },
  );
  if ('tokens' in outcome) return outcome.tokens;
  if (outcome.revoked?.length) await ctx.revocations.publish(outcome.revoked);
  throw outcome.error;
}

// ── grants and issuance ────────────────────────────────────────────────────────────────────────

async function createGrant(c: PgClient, g: Omit<Grant, 'id'>): Promise<Grant> {
  const grant = { id: newId('grt'), ...g };
  await insertGrant(c, grant);
  return grant;
}

async function issueTokenPair(
  c: PgClient,
  ctx: OAuthContext,
  grant: Grant,
  accessScopes: readonly Scope[],
  parentRefreshId: string | null,
): Promise<TokenResponse> {
  // The user's role as it is now (docs/roles.md): a refresh after a role change carries the new one.
  const role = await operatorRoleOf(c, grant.userId);
  const access = await issueAccessToken(
    ctx.keys,
    { accountId: grant.accountId, userId: grant.userId, clientId: grant.clientId, scopes: accessScopes, role },
    { issuer: ctx.issuer, ttlSeconds: ctx.accessTokenTtlSeconds },
  );
  await insertAccessToken(c, {
    jti: access.jti,
    grantId: grant.id,
    clientId: grant.clientId,
    expiresAt: access.expiresAt,
  });
  const refresh = newOpaqueToken();
  await insertRefreshToken(c, {
    id: newId('tok'),
    tokenHash: hashOpaqueToken(refresh),
    grantId: grant.id,
    parentId: parentRefreshId,
    ttlSeconds: REFRESH_TOKEN_TTL_SECONDS,
  });
  return {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_token: refresh,
    scope: formatScopes(accessScopes),
  };
}

/**
 * Operator path (`meterline tokens issue`): a grant for a user and client without the browser, with
 * the same scope rule as consent. Tokens are recorded like any others, so they can be revoked.
 */
export async function issueTokensForUser(
  ctx: OAuthContext,
  user: User,
  client: OAuthClient,
  scopes: readonly Scope[],
): Promise<TokenResponse> {
  return withTransaction(ctx.pg, async (c) => {
    const grant = await createGrant(c, {
      accountId: user.accountId,
      userId: user.id,
      clientId: client.id,
      scopes: [...scopes],
    });
    return issueTokenPair(c, ctx, grant, grant.scopes, null);
  });
}

// ── RFC 7009 revocation ────────────────────────────────────────────────────────────────────────

/**
 * Revokes a refresh token (and with it the whole grant, RFC 7009 §2.1) or an access token (its jti
 * goes on the revocation list). Unknown, malformed or expired tokens are not an error (§2.2); a token
 * of another client is refused.
 */
export async function revokeToken(ctx: OAuthContext, client: OAuthClient, token: string): Promise<void> {
  if (looksLikeJwt(token)) {
    const claims = await verifiedClaims(ctx, token);
    if (claims) {
      if (claims.clientId !== client.id)
        throw new OAuthError('unauthorized_client', 'The token was issued to another client.');
      await recordRevokedAccessToken(ctx.pg, claims);
      await ctx.revocations.publish([{ jti: claims.jti, exp: claims.exp }]);
      return;
    }
  }
  const revoked = await withTransaction(ctx.pg, async (c) => {
    const row = await lockRefreshToken(c, hashOpaqueToken(token));
    if (!row) return [];
    if (row.client_id !== client.id)
      throw new OAuthError('unauthorized_client', 'The token was issued to another client.');
    return revokeGrant(c, row.grant_id, 'revoked_by_client');
  });
  if (revoked.length) await ctx.revocations.publish(revoked);
}

function looksLikeJwt(token: string): boolean {
  return token.length < 4096 && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** Claims of an access token we signed, or null when it isn't one or has expired already. */
async function verifiedClaims(
  ctx: OAuthContext,
  token: string,
): Promise<{ jti: string; clientId: string; exp: number } | null> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return null; // not a JWS at all
  }
  const key = kid ? await ctx.keys.publicKey(kid) : undefined;
  if (!key) return null;
  try {
    const { payload } = await jwtVerify(token, key, { issuer: ctx.issuer, algorithms: [JWT_ALG], typ: 'at+jwt' });
    if (typeof payload.jti !== 'string' || typeof payload.client_id !== 'string' || typeof payload.exp !== 'number')
      return null;
    return { jti: payload.jti, clientId: payload.client_id, exp: payload.exp };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) return null;
    throw err;
  }
}
