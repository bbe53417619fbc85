import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { SubscriptionSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { currentDiscounts } from '../../domain/coupons/redeem.js';
import { getSubscription } from '../../domain/subscriptions/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';
import { accountTime } from '../../domain/test-clocks/store.js';

/** GET /v1/subscriptions/:subscription_id — the caller's own, or (admin) any customer's; else 404. */
export function getSubscriptionRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/subscriptions/:subscription_id',
    auth: 'read',
    handler: async (ctx) => {
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'subscription', ctx.params.subscription_id!);
      const [sub, { now }] = await Promise.all([
        getSubscription(deps.pg, accountId, ctx.params.subscription_id!),
        accountTime(deps.pg, accountId),
      ]);
      const discount = (await currentDiscounts(deps.pg, [sub.row.id])).get(sub.row.id) ?? null;
      const customers = await customerIdsOfAccounts(deps.pg, [accountId]);
      return reply.ok(toSubscription(sub, now, discount, customers.get(accountId)!));
    },
    doc: {
      summary: 'Get a subscription',
      tags: ['subscriptions'],
      responses: { '200': { description: 'The subscription', schema: SubscriptionSchema } },
    },
  };
}
