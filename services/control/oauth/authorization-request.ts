import type { PgPool } from '../../../shared/clients/postgres.js';
import { parseScopeParam, type Scope } from '../../../shared/auth/types.js';
import { S256_CHALLENGE } from '../../../shared/auth/pkce.js';
import { findClient, type OAuthClient } from '../../domain/accounts/clients-store.js';

/** A validated authorization request (RFC 6749 §4.1.1 + RFC 7636 §4.3). */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  /** RFC 6749 §4.1.3: when given here, the token request must repeat it. */
  redirectUriInRequest: boolean;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | null;
}

export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: show a page, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'page'; title: string; message: string }
  /** Anything else: tell the client through its redirect URI. */
  | { kind: 'redirect'; location: string };

const PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;
const DEFAULT_SCOPES: Scope[] = ['read'];

/** `redirect_uri` + `error`/`code`, `state` and `iss` (RFC 9207), keeping any query the URI had. */
export function authorizationResponse(
  redirectUri: string,
  issuer: string,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  url.searchParams.append('iss', issuer);
  return url.toString();
}

export async function checkAuthorizationRequest(
  pg: PgPool,
  issuer: string,
  query: URLSearchParams,
): Promise<AuthorizationCheck> {
  const counts = new Map<string, number>();
  for (const k of query.keys()) counts.set(k, (counts.get(k) ?? 0) + 1);
  const repeated = (k: string) => (counts.get(k) ?? 0) > 1;

  const clientId = query.get('client_id');
  if (!clientId) return { kind: 'page', title: 'Invalid request', message: 'The request has no client_id.' };
  if (repeated('client_id')) return { kind: 'page', title: 'Invalid request', message: 'client_id is repeated.' };
  const client = await findClient(pg, clientId);
  if (!client)
    return {
      kind: 'page',
      title: 'Unknown application',
      message: `No application is registered with the client_id "${clientId}".`,
    };

  if (repeated('redirect_uri')) return { kind: 'page', title: 'Invalid request', message: 'redirect_uri is repeated.' };
  const given = query.get('redirect_uri');
  let redirectUri: string;
  if (given !== null) {
    // Exact string comparison (RFC 9700 §4.1.3): no normalisation, no prefix or pattern matching.
    if (!client.redirectUris.includes(given)) {
      return {
        kind: 'page',
        title: 'Unregistered redirect URI',
        message: `The redirect URI "${given}" is not registered for ${client.name}.`,
      };
    }
    redirectUri = given;
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!; // RFC 6749 §3.1.2.3: optional when exactly one is registered
  } else {
    return {
      kind: 'page',
      title: 'Invalid request',
      message: `redirect_uri is required: ${client.name} has several registered.`,
    };
  }

  const state = query.get('state') ?? undefined;
  const fail = (error: string, description: string): AuthorizationCheck => ({
    kind: 'redirect',
    location: authorizationResponse(redirectUri, issuer, { error, error_description: description, state }),
  });

  const dup = PARAMS.find(repeated);
  if (dup) return fail('invalid_request', `The parameter "${dup}" is repeated.`);
  const responseType = query.get('response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required (use "code").');
  if (responseType !== 'code')
    return fail('unsupported_response_type', `response_type "${responseType}" is not supported; use "code".`);

  let scopes = DEFAULT_SCOPES;
  const scopeParam = query.get('scope');
  if (scopeParam !== null && scopeParam.trim() !== '') {
    const parsed = parseScopeParam(scopeParam);
    if ('unknown' in parsed)
      return fail('invalid_scope', `Unknown scope "${parsed.unknown}"; use read, write or admin.`);
    scopes = parsed.scopes;
  }

  const challenge = query.get('code_challenge');
  const method = query.get('code_challenge_method');
  if (challenge === null) {
    if (method !== null) return fail('invalid_request', 'code_challenge_method was sent without code_challenge.');
    if (client.isPublic)
      return fail(
        'invalid_request',
        'PKCE is required for public clients: send code_challenge with code_challenge_method=S256.',
      );
  } else {
    // A missing method means "plain" (RFC 7636 §4.3), which is refused like an explicit one (RFC 9700 §2.1.1).
    if (method !== 'S256')
      return fail(
        'invalid_request',
        method === null || method === 'plain'
          ? 'code_challenge_method must be S256; plain is not supported.'
          : `code_challenge_method "${method}" is not supported; use S256.`,
      );
    if (!S256_CHALLENGE.test(challenge))
      return fail('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the code verifier.');
  }

  return {
    kind: 'ok',
    request: { client, redirectUri, redirectUriInRequest: given !== null, scopes, state, codeChallenge: challenge },
  };
}
