import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CheckoutSessionSchema } from '../../../shared/api/checkout.js';
import { checkoutNotFound, findCheckoutSession } from '../../domain/checkout/store.js';
import { checkoutUrl } from '../../domain/checkout/links.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { toCheckoutSession } from './representation.js';

/** GET /v1/checkout_sessions/:checkout_session_id — admin: the session, its status and, once complete, its subscription. */
export function getCheckoutSessionRoute(deps: ApiDeps): RouteDef {
  const key = hostedKey(deps.config.SECRET_KEY);
  return {
    method: 'GET',
    path: '/v1/checkout_sessions/:checkout_session_id',
    auth: 'admin',
    handler: async (ctx) => {
      const id = ctx.params.checkout_session_id!;
      const row = await findCheckoutSession(deps.pg, id);
      if (!row) throw checkoutNotFound(id);
      const customers = row.account_id ? await customerIdsOfAccounts(deps.pg, [row.account_id]) : new Map();
      const url = checkoutUrl(key, deps.config.PUBLIC_BASE_URL, row.id);
      return reply.ok(toCheckoutSession(row, url, row.account_id ? (customers.get(row.account_id) ?? null) : null));
    },
    doc: {
      summary: 'Get a checkout session',
      tags: ['checkout'],
      responses: { '200': { description: 'The session', schema: CheckoutSessionSchema } },
    },
  };
}
