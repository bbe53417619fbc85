import type { RouteRegistry } from '../../../shared/http/route.js';
import type { OAuthContext } from './context.js';
import { authenticateClient } from './client-auth.js';
import { NO_STORE, oauthEndpoint } from './errors.js';
import { revokeToken } from './grants.js';
import { requestParams, required } from './params.js';

/**
 * POST /oauth/revoke (RFC 7009). Same client authentication as the token endpoint. A refresh token
 * revokes its whole grant; an access token goes on the revocation list. `token_type_hint` is
 * optional and only a hint: both kinds are recognised by their form. Unknown tokens → 200.
 */
export function registerRevoke(server: RouteRegistry, oauth: OAuthContext): void {
  server.route({
    method: 'POST',
    path: '/oauth/revoke',
    auth: 'public',
    body: 'form-or-json',
    maxBodyBytes: 16 * 1024,
    handler: (ctx) =>
      oauthEndpoint(async () => {
        const params = requestParams(ctx);
        const token = required(params, 'token');
        const client = await authenticateClient(oauth.pg, ctx.headers.authorization, params);
        await revokeToken(oauth, client, token);
        return { status: 200, headers: { ...NO_STORE } };
      }),
    doc: {
      summary: 'Token revocation (RFC 7009)',
      tags: ['oauth'],
      responses: {
        '200': { description: 'Revoked, or the token was not valid anyway' },
        '401': { description: 'invalid_client' },
      },
    },
  });
}
