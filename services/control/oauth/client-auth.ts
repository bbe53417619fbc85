import type { PgPool } from '../../../shared/clients/postgres.js';
import { clientSecretMatches } from '../../domain/accounts/clients.js';
import { findClient, type OAuthClient } from '../../domain/accounts/clients-store.js';
import { invalidClient, invalidRequest } from './errors.js';

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function decodeBasic(header: string): { id: string; secret: string } | null {
  let decoded: string;
  try {
    decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  } catch {
    return null;
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/**
 * Authenticates the client of a token or revocation request: `client_secret_basic`,
 * `client_secret_post`, or `none` (public clients identify themselves with `client_id`).
 * One method per request (RFC 6749 §2.3); every failure is 401 invalid_client.
 */
export async function authenticateClient(
  pg: PgPool,
  authorization: string | undefined,
  params: Map<string, string>,
): Promise<OAuthClient> {
  const bodySecret = params.get('client_secret');
  const bodyId = params.get('client_id');
  if (authorization !== undefined && authorization !== '') {
    if (!/^basic /i.test(authorization))
      throw invalidClient('Client authentication must use HTTP Basic or client_secret in the body.');
    if (bodySecret !== undefined)
      throw invalidRequest('Use one client authentication method: HTTP Basic or client_secret in the body, not both.');
    const creds = decodeBasic(authorization);
    if (!creds) throw invalidClient('The Basic credentials are malformed.');
    if (bodyId !== undefined && bodyId !== creds.id)
      throw invalidRequest('client_id in the body differs from the authenticated client.');
    const client = await findClient(pg, creds.id);
    if (!client || client.isPublic || !clientSecretMatches(client, creds.secret))
      throw invalidClient('Client authentication failed.');
    return client;
  }
  if (!bodyId)
    throw invalidClient(
      'Client authentication is required: send client_id (and client_secret for confidential clients).',
    );
  const client = await findClient(pg, bodyId);
  if (!client) throw invalidClient('Client authentication failed.');
  if (client.isPublic) {
    if (bodySecret) throw invalidClient('Public clients have no secret.');
    return client;
  }
  if (!bodySecret || !clientSecretMatches(client, bodySecret)) throw invalidClient('Client authentication failed.');
  return client;
}
