import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { pageOf } from '../../../shared/http/pagination.js';
import { ListSubscriptionsQuery, SubscriptionListSchema, toSubscription } from './schemas.js';
import { listSubscriptions } from './store.js';

const query = queryValidator<ListSubscriptionsQuery>(ListSubscriptionsQuery);

/** GET /v1/subscriptions?page&per_page&status — the caller's subscriptions, newest first. */
export function listSubscriptionsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/subscriptions',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const { subscriptions, total } = await listSubscriptions(deps.pg, ctx.principal!.accountId, q);
      const now = new Date();
      return { status: 200, body: pageOf(subscriptions.map((s) => toSubscription(s, now)), q.page, q.per_page, total) };
    },
    doc: {
      summary: 'List subscriptions (newest first)',
      tags: ['subscriptions'],
      query: ListSubscriptionsQuery,
      responses: { '200': { description: 'A page of subscriptions', schema: SubscriptionListSchema } },
    },
  };
}
