import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { servedRoutes } from './api-call.js';
import { PORTAL_CSS } from './layout.js';
import { createPortalSessionRoute } from './session-create.js';
import { openPortalLinkRoute } from './session-open.js';
import { overviewRoute } from './overview.js';
import { subscriptionActionRoute } from './subscription-actions.js';
import { invoiceLinkRoutes, invoicesRoute } from './invoices.js';
import { addCardRoute, paymentMethodsRoute, setDefaultCardRoute } from './payment-methods.js';
import { balancesRoute, buyCreditRoute } from './balances.js';
import { billingDetailsRoute, updateBillingDetailsRoute } from './billing-details.js';

/**
 * The customer portal (docs/portal.md): POST /v1/portal_sessions makes a one-time link; /portal/start/:token opens
 * it; the /portal pages and forms then act as that customer through the API's own operations (api-call.ts), which
 * is why this module registers after every feature it uses.
 */
export const portalModule: RouteModuleFactory = (deps) => ({
  name: 'portal',
  area: 'control',
  register(server) {
    const api = servedRoutes(server);
    server.route(createPortalSessionRoute(deps));
    server.route(openPortalLinkRoute(deps));
    server.route({
      method: 'GET',
      path: '/portal/assets/portal.css',
      auth: 'public',
      handler: () =>
        reply.file(PORTAL_CSS, 'text/css; charset=utf-8', {
          'Cache-Control': 'public, max-age=300',
          'X-Content-Type-Options': 'nosniff',
        }),
      doc: {
        summary: 'The customer portal’s stylesheet',
        tags: ['portal'],
        responses: { '200': { description: 'the file', schema: { type: 'string' }, contentType: 'text/css' } },
      },
    });
    server.route(overviewRoute(deps, api));
    server.route(subscriptionActionRoute(deps, api));
    server.route(invoicesRoute(deps, api));
    for (const r of invoiceLinkRoutes(deps, api)) server.route(r);
    server.route(paymentMethodsRoute(deps, api));
    server.route(setDefaultCardRoute(deps, api));
    server.route(addCardRoute(deps, api));
    server.route(balancesRoute(deps, api));
    server.route(buyCreditRoute(deps, api));
    server.route(billingDetailsRoute(deps, api));
    server.route(updateBillingDetailsRoute(deps, api));
  },
});
