import type { RouteRegistry } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import type { OAuthContext } from './context.js';
import { authenticateClient } from './client-auth.js';
import { NO_STORE, OAuthError, oauthEndpoint } from './errors.js';
import { redeemAuthorizationCode, refreshTokens } from './grants.js';
import { requestParams, required } from './params.js';

/**
 * POST /oauth/token (RFC 6749 §3.2): form-encoded or JSON; client_secret_basic, client_secret_post or
 * none (public clients); grants authorization_code and refresh_token. Responses and errors carry
 * Cache-Control: no-store.
 */
export function registerToken(server: RouteRegistry, oauth: OAuthContext): void {
  server.route({
    method: 'POST',
    path: '/oauth/token',
    auth: 'public',
    body: 'form-or-json',
    maxBodyBytes: 16 * 1024,
    handler: (ctx) =>
      oauthEndpoint(async () => {
        const params = requestParams(ctx);
        const grantType = required(params, 'grant_type');
        const client = await authenticateClient(oauth.pg, ctx.headers.authorization, params);
        let tokens;
        if (grantType === 'authorization_code') {
          tokens = await redeemAuthorizationCode(oauth, client, {
            code: required(params, 'code'),
            redirectUri: params.get('redirect_uri'),
            codeVerifier: params.get('code_verifier'),
          });
        } else if (grantType === 'refresh_token') {
          tokens = await refreshTokens(oauth, client, {
            refreshToken: required(params, 'refresh_token'),
            scope: params.get('scope'),
          });
        } else {
          throw new OAuthError(
            'unsupported_grant_type',
            `grant_type "${grantType}" is not supported; use authorization_code or refresh_token.`,
          );
        }
        return reply.json(200, tokens, { ...NO_STORE });
      }),
    doc: {
      summary: 'Token endpoint (RFC 6749 §3.2): authorization_code and refresh_token grants',
      tags: ['oauth'],
      responses: {
        '200': { description: '{access_token, token_type, expires_in, refresh_token, scope}' },
        '400': { description: 'RFC 6749 §5.2 error' },
        '401': { description: 'invalid_client' },
      },
    },
  });
}
