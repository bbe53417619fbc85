import type { RouteRegistry } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { SCOPES } from '../../../shared/auth/types.js';
import type { SigningKeys } from '../../../shared/auth/signing-keys.js';

/** RFC 8414 authorization server metadata; `issuer` is PUBLIC_BASE_URL exactly. */
export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
  };
}

export function registerMetadata(server: RouteRegistry, deps: { issuer: string; keys: SigningKeys }): void {
  const metadata = authorizationServerMetadata(deps.issuer);
  server.route({
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    auth: 'public',
    handler: () => reply.json(200, metadata, { 'Cache-Control': 'public, max-age=300' }),
    doc: { summary: 'OAuth 2.0 authorization server metadata (RFC 8414)', tags: ['oauth'] },
  });
  server.route({
    method: 'GET',
    path: '/oauth/jwks',
    auth: 'public',
    handler: async () => reply.json(200, await deps.keys.jwks(), { 'Cache-Control': 'public, max-age=300' }),
    doc: { summary: 'Public keys that sign access tokens (JWK Set)', tags: ['oauth'] },
  });
}
