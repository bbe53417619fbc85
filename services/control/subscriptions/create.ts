import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateSubscriptionBody, SubscriptionSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { parseNewSubscription, type NewSubscription } from './input.js';
import { createSubscription } from '../../domain/subscriptions/store.js';
import { lockAccountClock } from '../../domain/test-clocks/store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { itemsOfPlan, planVersionToSubscribe } from '../../domain/plans/subscribe.js';
import { planTerms, subscriptionTermsOfPlan } from '../../domain/plans/terms.js';
import { requireAdminForCoupon } from '../coupons/scope.js';
import { currentDiscounts, setSubscriptionCoupon } from '../../domain/coupons/redeem.js';
import { hasScope } from '../../../shared/auth/types.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { checkCustomerMayCreate } from '../../domain/subscriptions/terms-owner.js';
import { checkThresholdMinimum } from '../../domain/subscriptions/threshold-minimum.js';

/** POST /v1/subscriptions — 201 + Location; emits subscription.updated in the same transaction. */
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
        // The customer's clock lock first (one lock order with attaching it to a test clock: never both).
        const { now } = await lockAccountClock(c, accountId);
        checkCustomerMayCreate(isOperator, (await readPortalSettings(c)).settings);
        // A plan's subscription gets its version's items (docs/plans.md), its interval and
        // trial (subscriptionTermsOfPlan).
        const version = input.plan && (await planVersionToSubscribe(c, input.plan.id, input.plan.version));
        const items = version ? itemsOfPlan(version.items) : input.items;
        const plan = version ? { id: version.plan_id, version: version.version } : null;
        const terms = version ? subscriptionTermsOfPlan(planTerms(version), input.terms) : input.terms;
        // Made by the operator for a customer: its terms are the operator's (terms-owner.ts).
        const operatorMade = isOperator && accountId !== ctx.principal!.accountId;
        const sub = await createSubscription(
          c,
          accountId,
          items,
          now,
          input.billingThreshold,
          plan,
          terms,
          operatorMade,
        );
        checkThresholdMinimum(sub.row.billing_threshold, sub.row.currency, deps.config.BILLING_THRESHOLD_MINIMUMS);
        // A coupon at creation: redeemed in the same transaction (a refused coupon creates nothing).
        if (input.couponId != null) await setSubscriptionCoupon(c, sub, input.couponId, now, { emit: false });
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
