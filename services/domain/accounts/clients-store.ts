import type { PgPool } from '../../../shared/clients/postgres.js';

/** A registered OAuth client: confidential (has a secret) or public (PKCE, no secret). */
export interface OAuthClient {
  id: string;
  name: string;
  isPublic: boolean;
  redirectUris: readonly string[];
  secretHash: string | null;
}

/** Stores a client whose name and redirect URIs passed the rules (clients.ts createClient). */
export async function insertClient(pg: PgPool, c: OAuthClient): Promise<void> {
  await pg.query(
    'INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, is_public) VALUES ($1, $2, $3, $4, $5)',
    [c.id, c.name, c.secretHash, c.redirectUris, c.isPublic],
  );
}

export async function findClient(pg: PgPool, clientId: string): Promise<OAuthClient | null> {
  if (!clientId || clientId.length > 100) return null;
  const { rows } = await pg.query<{
    id: string;
    name: string;
    is_public: boolean;
    redirect_uris: string[];
    secret_hash: string | null;
  }>('SELECT id, name, is_public, redirect_uris, secret_hash FROM oauth_clients WHERE id = $1', [clientId]);
  const r = rows[0];
  return r
    ? { id: r.id, name: r.name, isPublic: r.is_public, redirectUris: r.redirect_uris, secretHash: r.secret_hash }
    : null;
}

/**
 * Registers a public client with `redirectUri` among its redirect URIs: creates it, or adds the URI to the
 * ones it has (the console's client, one URI per address the console was served from).
 */
export async function ensurePublicClientRedirect(
  pg: PgPool,
  id: string,
  name: string,
  redirectUri: string,
): Promise<void> {
  await pg.query(
    `INSERT INTO oauth_clients (id, name, secret_hash, redirect_uris, is_public) VALUES ($1, $2, NULL, ARRAY[$3::text], true)
     ON CONFLICT (id) DO UPDATE SET redirect_uris = oauth_clients.redirect_uris || $3::text
       WHERE NOT ($3::text = ANY (oauth_clients.redirect_uris))`,
    [id, name, redirectUri],
  );
}
