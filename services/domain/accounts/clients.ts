import type { PgPool } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { hashOpaqueToken, matchesHash, newOpaqueToken } from '../../../shared/auth/opaque-tokens.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { insertClient, type OAuthClient } from './clients-store.js';

export interface CreatedClient {
  client_id: string;
  /** Shown once; only its hash is stored. null for public clients. */
  client_secret: string | null;
}

const SECRET_SCHEME = 'sha256$';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:']);

/**
 * Why a redirect URI cannot be registered, or null when it can (RFC 6749 §3.1.2, RFC 9700 §2.1 and
 * §4.1.1, RFC 8252 §7): absolute, no fragment; https, or http only on a loopback host, or a
 * private-use scheme in reverse-domain form (`com.example.app:/callback`) for native apps.
 * Matching at authorization time is exact string comparison.
 */
export function redirectUriProblem(uri: string): string | null {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2000)
    return 'must be an absolute URI of at most 2000 characters';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (/\s/.test(uri)) return 'must not contain whitespace';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return `the ${u.protocol} scheme is not allowed`;
  if (u.protocol === 'https:') return u.host ? null : 'must name a host';
  if (u.protocol === 'http:')
    return LOOPBACK_HOSTS.has(u.hostname)
      ? null
      : 'http is only allowed for loopback hosts (localhost, 127.0.0.1, [::1]); use https';
  return u.protocol.slice(0, -1).includes('.')
    ? null
    : 'a custom scheme must be in reverse-domain form, e.g. com.example.app:/callback';
}

export async function createClient(
  pg: PgPool,
  input: { name: string; redirectUris: readonly string[]; isPublic: boolean },
): Promise<CreatedClient> {
  const errors: FieldError[] = [];
  if (!input.name?.trim() || input.name.length > 200)
    errors.push({ field: 'name', message: 'must be 1–200 characters' });
  if (!input.redirectUris?.length)
    errors.push({ field: 'redirect_uri', message: 'at least one redirect URI is required' });
  for (const uri of input.redirectUris ?? []) {
    const problem = redirectUriProblem(uri);
    if (problem) errors.push({ field: 'redirect_uri', message: `${uri}: ${problem}` });
  }
  if (errors.length) throw new ValidationError(errors);
  const id = newId('cli');
  const secret = input.isPublic ? null : newOpaqueToken();
  await insertClient(pg, {
    id,
    name: input.name.trim(),
    secretHash: secret ? SECRET_SCHEME + hashOpaqueToken(secret) : null,
    redirectUris: [...new Set(input.redirectUris)],
    isPublic: input.isPublic,
  });
  return { client_id: id, client_secret: secret };
}

/** Constant-time check of a confidential client's secret. */
export function clientSecretMatches(client: OAuthClient, secret: string): boolean {
  if (!client.secretHash || !client.secretHash.startsWith(SECRET_SCHEME)) return false;
  return matchesHash(secret, client.secretHash.slice(SECRET_SCHEME.length));
}
