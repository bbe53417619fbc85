import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { hasScope } from '../../../shared/auth/types.js';
import { PlanChangeBody, SubscriptionSchema } from '../../../shared/api/subscriptions.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';
import { customerIdsOfAccounts } from '../../domain/customers/store.js';
import { currentDiscounts } from '../../domain/coupons/redeem.js';
import { changeSubscriptionPlan } from '../../domain/plans/change.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { getSubscription } from '../../domain/subscriptions/store.js';
import { checkCustomerMayChange } from '../../domain/subscriptions/terms-owner.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { toSubscription } from './representation.js';

const body = bodyValidator<PlanChangeBody>(PlanChangeBody);

/**
 * POST /v1/subscriptions/:subscription_id/plan_change — moves a subscription to another plan: now (pro-rated) or at
 * the period's end (scheduled_plan_change); by default an upgrade now and a downgrade at the period's end. A plan
 * change replaces the items, so a customer may make it where it may change items (terms-owner.ts).
 */
export function planChangeRoute(deps: ApiDeps): RouteDef<PlanChangeBody> {
  return {
    method: 'POST',
    path: '/v1/subscriptions/:subscription_id/plan_change',
    auth: 'write',
    input: (ctx) => body.parse(ctx.body),
    handler: async (ctx, change) => {
      const id = ctx.params.subscription_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'subscription', id);
      const { subscription, now } = await withTransaction(deps.pg, async (c) => {
        const { now } = await accountTime(c, accountId);
        const cur = await getSubscription(c, accountId, id, true);
        checkCustomerMayChange(
          hasScope(ctx.principal!, 'admin'),
          cur.row,
          { items: change.plan_id },
          (await readPortalSettings(c)).settings,
        );
        await changeSubscriptionPlan(
          c,
          accountId,
          id,
          { planId: change.plan_id, version: change.plan_version },
          change.at,
          now,
        );
        return { subscription: await getSubscription(c, accountId, id), now };
      });
      const discount = (await currentDiscounts(deps.pg, [id])).get(id) ?? null;
      const customers = await customerIdsOfAccounts(deps.pg, [accountId]);
      return reply.ok(toSubscription(subscription, now, discount, customers.get(accountId)!));
    },
    doc: {
      summary:
        'Move a subscription to another plan: now, pro-rated, or at the period’s end (default: an upgrade now, a downgrade at the period’s end)',
      tags: ['subscriptions'],
      requestBody: PlanChangeBody,
      responses: {
        '200': { description: 'The subscription after the change', schema: SubscriptionSchema },
        '403': problemResponse('a customer on the operator’s subscription without customer_can_change_items'),
        '409': problemResponse('the subscription is canceled (subscription_canceled)'),
        '422': problemResponse('no such plan or version, or another currency or period (plan_id, plan_version)'),
      },
    },
  };
}
