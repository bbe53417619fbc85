import type { RouteRegistry } from '../../../shared/http/route.js';
import type { SsoContext } from './context.js';
import { ssoFailurePage } from './pages.js';
import { RedeemError } from './relying-party.js';
import { safeReturnTo } from './transaction.js';

/**
 * GET /console/sso/start[?return_to=/oauth/authorize?…]: a new transaction (state, nonce, PKCE verifier) sealed in
 * this browser's cookie, and a redirect to the provider's authorization endpoint.
 */
export function registerSsoStart(server: RouteRegistry, sso: SsoContext): void {
  server.route({
    method: 'GET',
    path: '/console/sso/start',
    auth: 'public',
    handler: async (ctx) => {
      if (!sso.relyingParty) return ssoFailurePage('sso_off');
      const { transaction, setCookie } = sso.transactions.begin(safeReturnTo(ctx.query.get('return_to')));
      try {
        const location = await sso.relyingParty.authorizationUrl(transaction);
        return {
          status: 302,
          headers: {
            Location: location.href,
            'Set-Cookie': setCookie,
            'Cache-Control': 'no-store',
            'Referrer-Policy': 'no-referrer',
          },
        };
      } catch (err) {
        if (!(err instanceof RedeemError)) throw err;
        sso.log.warn({ err }, 'sso provider unreachable');
        return ssoFailurePage(err.failure);
      }
    },
    doc: {
      summary: 'Starts a single sign-on through SSO_ISSUER (authorization code + PKCE S256, state, nonce)',
      tags: ['sso'],
      responses: {
        '302': { description: "Redirect to the identity provider's authorization endpoint" },
        '404': { description: 'HTML page: single sign-on is off', contentType: 'text/html' },
      },
    },
  });
}
