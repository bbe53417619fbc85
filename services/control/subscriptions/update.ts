import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { SubscriptionSchema, UpdateSubscriptionBody } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { parseSubscriptionChange, type SubscriptionChange } from './input.js';
import { changeSubscription, getSubscription } from '../../domain/subscriptions/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';
import { hasScope } from '../../../shared/auth/types.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { checkCustomerMayChange } from '../../domain/subscriptions/terms-owner.js';
import { checkThresholdMinimum } from '../../domain/subscriptions/threshold-minimum.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { requireAdminForCoupon } from '../coupons/scope.js';
import { currentDiscounts, setSubscriptionCoupon } from '../../domain/coupons/redeem.js';
import { redeemPromotionCode } from '../../domain/promotion-codes/redeem.js';

/**
 * PATCH /v1/subscriptions/:subscription_id — replace items, set `billing_threshold` and/or cancel
 * (`{"status": "canceled"}`): the caller's own, or (admin) any customer's of the deployment.
 */
export function updateSubscriptionRoute(deps: ApiDeps): RouteDef<SubscriptionChange> {
  return {
    method: 'PATCH',
    path: '/v1/subscriptions/:subscription_id',
    auth: 'write',
    input: parseSubscriptionChange,
    handler: async (ctx, change) => {
      if (change.couponId !== undefined) requireAdminForCoupon(ctx.principal!);
      const id = ctx.params.subscription_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'subscription', id);
      const isOperator = hasScope(ctx.principal!, 'admin');
      const { subscription, now, discount } = await withTransaction(deps.pg, async (c) => {
        const { now } = await accountTime(c, accountId);
        // Who may change what it bills (terms-owner.ts), decided under the row lock changeSubscription takes again.
        const cur = await getSubscription(c, accountId, id, true);
        checkCustomerMayChange(isOperator, cur.row, change, (await readPortalSettings(c)).settings);
        // changeSubscription locks the row; the coupon changes under that lock, in the same transaction.
        const { subscription } = await changeSubscription(c, accountId, id, change, now);
        if (change.billingThreshold !== undefined)
          checkThresholdMinimum(
            change.billingThreshold,
            subscription.row.currency,
            deps.config.BILLING_THRESHOLD_MINIMUMS,
          );
        if (change.couponId !== undefined) await setSubscriptionCoupon(c, subscription, change.couponId, now);
        // A promotion code is the customer-facing way to a coupon: counted once, refused precisely (redeem.ts), in
        // this transaction, so a refusal later rolls its count back.
        if (change.promotionCode !== undefined) {
          const code = await redeemPromotionCode(c, change.promotionCode, accountId, now);
          await setSubscriptionCoupon(c, subscription, code.coupon_id, now);
        }
        const discount = (await currentDiscounts(c, [subscription.row.id])).get(subscription.row.id) ?? null;
        return { subscription, now, discount };
      });
      const customers = await customerIdsOfAccounts(deps.pg, [subscription.row.account_id]);
      return reply.ok(toSubscription(subscription, now, discount, customers.get(subscription.row.account_id)!));
    },
    doc: {
      summary: 'Change a subscription’s items, threshold or coupon (admin), or cancel it (now or at the period’s end)',
      tags: ['subscriptions'],
      requestBody: UpdateSubscriptionBody,
      responses: {
        '200': { description: 'The subscription after the change', schema: SubscriptionSchema },
        '403': {
          description:
            'A customer’s token on a subscription the operator made, changing what portal settings keep for the operator (code operator_terms, errors name the fields), or self-serve turned off (self_serve_disabled)',
        },
        '409': { description: 'The subscription is canceled (code subscription_canceled)' },
      },
    },
  };
}
