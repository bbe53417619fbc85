import type { RouteDef } from '../../../shared/http/route.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { SubscriptionSchema, toSubscription } from './schemas.js';
import { getSubscription } from './store.js';

/** GET /v1/subscriptions/:subscription_id — 404 for another account's subscription. */
export function getSubscriptionRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/subscriptions/:subscription_id',
    auth: 'read',
    handler: async (ctx) => ({ status: 200, body: toSubscription(await getSubscription(deps.pg, ctx.principal!.accountId, ctx.params.subscription_id!)) }),
    doc: {
      summary: 'Get a subscription',
      tags: ['subscriptions'],
      responses: { '200': { description: 'The subscription', schema: SubscriptionSchema } },
    },
  };
}
