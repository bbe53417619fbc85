import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListSubscriptionsQuery, SubscriptionListSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { currentDiscounts } from '../../domain/coupons/redeem.js';
import { parseListSubscriptions } from './input.js';
import { listSubscriptions } from '../../domain/subscriptions/store.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';

/** GET /v1/subscriptions?page&per_page&status — the caller's subscriptions, newest first. */
export function listSubscriptionsRoute(deps: ApiDeps): RouteDef<ListSubscriptionsQuery> {
  return {
    method: 'GET',
    path: '/v1/subscriptions',
    auth: 'read',
    input: parseListSubscriptions,
    handler: async (ctx, q) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, q.customer_id);
      const [{ subscriptions, total }, { now }] = await Promise.all([
        listSubscriptions(deps.pg, accountId, q, pageWindow(q)),
        accountTime(deps.pg, accountId),
      ]);
      const discounts = await currentDiscounts(
        deps.pg,
        subscriptions.map((s) => s.row.id),
      );
      return reply.page(
        subscriptions.map((s) => toSubscription(s, now, discounts.get(s.row.id) ?? null)),
        q,
        total,
      );
    },
    doc: {
      summary: 'List subscriptions (newest first)',
      tags: ['subscriptions'],
      query: ListSubscriptionsQuery,
      responses: { '200': { description: 'A page of subscriptions', schema: SubscriptionListSchema } },
    },
  };
}
