import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { Revocation } from '../../../shared/auth/revocations.js';

/**
 * OAuth 2.0 storage (services/control/oauth/ runs the protocol): authorization codes, grants, refresh and
 * access tokens. Codes and refresh tokens are stored as hashes only; the caller passes the hash.
 */

/** Why a grant was revoked; kept on the row for audits. */
export type RevocationReason = 'code_replay' | 'refresh_token_reuse' | 'revoked_by_client' | 'revoked_by_operator';

// ── authorization codes ────────────────────────────────────────────────────────────────────────

export interface NewAuthorizationCode {
  codeHash: string;
  clientId: string;
  accountId: string;
  userId: string;
  redirectUri: string;
  redirectUriInRequest: boolean;
  scopes: string[];
  codeChallenge: string | null;
  ttlSeconds: number;
}

/** Stores a code valid for `ttlSeconds`; the database enforces the bound. */
export async function insertAuthorizationCode(pg: PgPool, code: NewAuthorizationCode): Promise<void> {
  await pg.query(
    `INSERT INTO oauth_authorization_codes (code_hash, client_id, account_id, user_id, redirect_uri, redirect_uri_in_request, scopes, code_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
    [
      code.codeHash,
      code.clientId,
      code.accountId,
      code.userId,
      code.redirectUri,
      code.redirectUriInRequest,
      code.scopes,
      code.codeChallenge,
      code.ttlSeconds,
    ],
  );
}

export interface CodeRow {
  client_id: string;
  account_id: string;
  user_id: string;
  redirect_uri: string;
  redirect_uri_in_request: boolean;
  scopes: string[];
  code_challenge: string | null;
  expired: boolean;
  redeemed_at: Date | null;
  grant_id: string | null;
}

/** The code, locked for the caller's transaction: concurrent redemptions serialise. */
export async function lockAuthorizationCode(client: PgClient, codeHash: string): Promise<CodeRow | undefined> {
  const { rows } = await client.query<CodeRow>(
    `SELECT client_id, account_id, user_id, redirect_uri, redirect_uri_in_request, scopes, code_challenge, expires_at <= now() AS expired, redeemed_at, grant_id
     FROM oauth_authorization_codes WHERE code_hash = $1 FOR UPDATE`,
    [codeHash],
  );
  return rows[0];
}

export async function markCodeRedeemed(client: PgClient, codeHash: string): Promise<void> {
  await client.query('UPDATE oauth_authorization_codes SET redeemed_at = now() WHERE code_hash = $1', [codeHash]);
}

/** Remembers the grant a code created, so a replay of the code revokes it. */
export async function setCodeGrant(client: PgClient, codeHash: string, grantId: string): Promise<void> {
  await client.query('UPDATE oauth_authorization_codes SET grant_id = $2 WHERE code_hash = $1', [codeHash, grantId]);
}

// ── grants and tokens ──────────────────────────────────────────────────────────────────────────

export interface GrantRow {
  id: string;
  accountId: string;
  userId: string;
  clientId: string;
  scopes: string[];
}

export async function insertGrant(client: PgClient, g: GrantRow): Promise<void> {
  await client.query(
    'INSERT INTO oauth_grants (id, account_id, user_id, client_id, scopes) VALUES ($1, $2, $3, $4, $5)',
    [g.id, g.accountId, g.userId, g.clientId, g.scopes],
  );
}

/** An access token issued under a grant (`expiresAt` in Unix seconds), recorded so it can be revoked. */
export async function insertAccessToken(
  client: PgClient,
  t: { jti: string; grantId: string; clientId: string; expiresAt: number },
): Promise<void> {
  await client.query(
    'INSERT INTO oauth_access_tokens (jti, grant_id, client_id, expires_at) VALUES ($1, $2, $3, to_timestamp($4))',
    [t.jti, t.grantId, t.clientId, t.expiresAt],
  );
}

export async function insertRefreshToken(
  client: PgClient,
  t: { id: string; tokenHash: string; grantId: string; parentId: string | null; ttlSeconds: number },
): Promise<void> {
  await client.query(
    'INSERT INTO oauth_refresh_tokens (id, token_hash, grant_id, parent_id, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))',
    [t.id, t.tokenHash, t.grantId, t.parentId, t.ttlSeconds],
  );
}

export interface RefreshRow {
  id: string;
  grant_id: string;
  rotated_at: Date | null;
  token_revoked_at: Date | null;
  expired: boolean;
  account_id: string;
  user_id: string;
  client_id: string;
  scopes: string[];
  grant_revoked_at: Date | null;
}

/** The refresh token and its grant, both locked for the caller's transaction. */
export async function lockRefreshToken(client: PgClient, tokenHash: string): Promise<RefreshRow | undefined> {
  const { rows } = await client.query<RefreshRow>(
    `SELECT rt.id, rt.grant_id, rt.rotated_at, rt.revoked_at AS token_revoked_at, rt.expires_at <= now() AS expired,
            g.account_id, g.user_id, g.client_id, g.scopes, g.revoked_at AS grant_revoked_at
       FROM oauth_refresh_tokens rt JOIN oauth_grants g ON g.id = rt.grant_id
      WHERE rt.token_hash = $1 FOR UPDATE OF rt, g`,
    [tokenHash],
  );
  return rows[0];
}

export async function markRefreshTokenRotated(client: PgClient, id: string): Promise<void> {
  await client.query('UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE id = $1', [id]);
}

/** Revokes a grant, its refresh tokens and its live access tokens; returns the latter for the revocation list. */
export async function revokeGrant(client: PgClient, grantId: string, reason: RevocationReason): Promise<Revocation[]> {
  await client.query(
    'UPDATE oauth_grants SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL',
    [grantId, reason],
  );
  await client.query('UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL', [
    grantId,
  ]);
  const { rows } = await client.query<{ jti: string; exp: number }>(
    `UPDATE oauth_access_tokens SET revoked_at = now()
      WHERE grant_id = $1 AND revoked_at IS NULL AND expires_at > now()
      RETURNING jti, extract(epoch FROM expires_at)::bigint AS exp`,
    [grantId],
  );
  return rows.map((r) => ({ jti: r.jti, exp: Number(r.exp) }));
}

/** An access token revoked by its client (RFC 7009): recorded revoked, whether or not it was recorded before. */
export async function recordRevokedAccessToken(
  pg: PgPool,
  t: { jti: string; clientId: string; exp: number },
): Promise<void> {
  await pg.query(
    `INSERT INTO oauth_access_tokens (jti, client_id, expires_at, revoked_at) VALUES ($1, $2, to_timestamp($3), now())
     ON CONFLICT (jti) DO UPDATE SET revoked_at = COALESCE(oauth_access_tokens.revoked_at, now())`,
    [t.jti, t.clientId, t.exp],
  );
}

// ── replication of revocations and housekeeping ────────────────────────────────────────────────

/** Codes and refresh tokens are kept a day after expiry so a late replay still revokes what they issued. */
const KEEP_EXPIRED = "interval '1 day'";

/** The revocations now replicated to the NATS KV bucket. */
export async function markRevocationsPublished(pg: PgPool, jtis: string[]): Promise<void> {
  await pg.query('UPDATE oauth_access_tokens SET published_at = now() WHERE jti = ANY($1)', [jtis]);
}

/** Revoked, still live access tokens not yet replicated (NATS was down at revocation time). */
export async function unpublishedRevocations(pg: PgPool, limit: number): Promise<Revocation[]> {
  const pending = await pg.query<{ jti: string; exp: number }>(
    `SELECT jti, extract(epoch FROM expires_at)::bigint AS exp FROM oauth_access_tokens
      WHERE revoked_at IS NOT NULL AND published_at IS NULL AND expires_at > now() LIMIT $1`,
    [limit],
  );
  return pending.rows.map((r) => ({ jti: r.jti, exp: Number(r.exp) }));
}

/** Replicated revocations of tokens expired since (their bucket entries can go). */
export async function expiredPublishedRevocations(pg: PgPool, limit: number): Promise<string[]> {
  const expired = await pg.query<{ jti: string }>(
    'SELECT jti FROM oauth_access_tokens WHERE published_at IS NOT NULL AND expires_at <= now() LIMIT $1',
    [limit],
  );
  return expired.rows.map((r) => r.jti);
}

export async function deleteAccessTokens(pg: PgPool, jtis: string[]): Promise<void> {
  await pg.query('DELETE FROM oauth_access_tokens WHERE jti = ANY($1)', [jtis]);
}

/** Deletes expired unreplicated access tokens, codes, sessions and refresh tokens. */
export async function purgeExpiredOAuthRows(pg: PgPool): Promise<void> {
  await pg.query('DELETE FROM oauth_access_tokens WHERE published_at IS NULL AND expires_at <= now()');
  await pg.query(`DELETE FROM oauth_authorization_codes WHERE expires_at < now() - ${KEEP_EXPIRED}`);
  await pg.query('DELETE FROM oauth_sessions WHERE expires_at <= now()');
  await pg.query(`DELETE FROM oauth_refresh_tokens WHERE expires_at < now() - ${KEEP_EXPIRED}`);
}
