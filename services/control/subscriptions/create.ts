import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateSubscriptionBody, SubscriptionSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { parseNewSubscription, type NewSubscription } from './input.js';
import { subscribe } from '../../domain/billing/subscribe.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { requireAdminForCoupon } from '../coupons/scope.js';
import { currentDiscounts } from '../../domain/coupons/redeem.js';
import { hasScope } from '../../../shared/auth/types.js';

/** POST /v1/subscriptions — 201 + Location; the domain's subscribe (services/domain/billing/subscribe.ts). */
export function createSubscriptionRoute(deps: ApiDeps): RouteDef<NewSubscription> {
  return {
    method: 'POST',
    path: '/v1/subscriptions',
    auth: 'write',
    input: parseNewSubscription,
    handler: async (ctx, input) => {
      if (input.couponId != null) requireAdminForCoupon(ctx.principal!);
      const accountId = await accountActedFor(deps.pg, ctx.principal!, input.customerId);
      const isOperator = hasScope(ctx.principal!, 'admin');
      const { sub, now, discount } = await withTransaction(deps.pg, async (c) => {
        const { subscription: sub, now } = await subscribe(c, {
          accountId,
          items: input.items,
          plan: input.plan,
          billingThreshold: input.billingThreshold,
          couponId: input.couponId,
          terms: input.terms,
          byOperator: isOperator,
          operatorManaged: isOperator && accountId !== ctx.principal!.accountId,
          thresholdMinimums: deps.config.BILLING_THRESHOLD_MINIMUMS,
        });
        return { sub, now, discount: (await currentDiscounts(c, [sub.row.id])).get(sub.row.id) ?? null };
      });
      const customers = await customerIdsOfAccounts(deps.pg, [sub.row.account_id]);
      return reply.created(
        toSubscription(sub, now, discount, customers.get(sub.row.account_id)!),
        `/v1/subscriptions/${sub.row.id}`,
      );
    },
    doc: {
      summary: 'Subscribe the account (an operator: any customer, customer_id) to products or to a plan',
      tags: ['subscriptions'],
      requestBody: CreateSubscriptionBody,
      responses: {
        '201': { description: 'The created subscription (Location names it)', schema: SubscriptionSchema },
        '403': {
          description: 'A customer’s token while the operator turned self-serve off (code self_serve_disabled)',
        },
      },
    },
  };
}
