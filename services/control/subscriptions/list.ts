import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListSubscriptionsQuery, SubscriptionListSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { currentDiscounts } from '../../domain/coupons/redeem.js';
import { parseListSubscriptions } from './input.js';
import { listSubscriptions } from '../../domain/subscriptions/store.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { accountsListedFor } from '../../domain/customers/acting-for.js';

/**
 * GET /v1/subscriptions?page&per_page&status&customer_id&scope — the caller's subscriptions (an operator's: a
 * customer's, or with scope=deployment every customer's), newest first.
 */
export function listSubscriptionsRoute(deps: ApiDeps): RouteDef<ListSubscriptionsQuery> {
  return {
    method: 'GET',
    path: '/v1/subscriptions',
    auth: 'read',
    input: parseListSubscriptions,
    handler: async (ctx, q) => {
      const accountId = await accountsListedFor(deps.pg, ctx.principal!, q);
      const { subscriptions, total } = await listSubscriptions(deps.pg, accountId, q, pageWindow(q));
      // Each subscription at its own account's time (a customer on a test clock lives at the clock's).
      const accounts = [...new Set(subscriptions.map((s) => s.row.account_id))];
      const times = new Map(
        await Promise.all(accounts.map(async (a) => [a, (await accountTime(deps.pg, a)).now] as const)),
      );
      const customers = await customerIdsOfAccounts(deps.pg, accounts);
      const discounts = await currentDiscounts(
        deps.pg,
        subscriptions.map((s) => s.row.id),
      );
      return reply.page(
        subscriptions.map((s) =>
          toSubscription(
            s,
            times.get(s.row.account_id)!,
            discounts.get(s.row.id) ?? null,
            customers.get(s.row.account_id)!,
          ),
        ),
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
