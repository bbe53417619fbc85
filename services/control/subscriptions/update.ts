import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { SubscriptionSchema, UpdateSubscriptionBody } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { parseSubscriptionChange, type SubscriptionChange } from './input.js';
import { changeSubscription } from '../../domain/subscriptions/store.js';
import { accountTime } from '../../domain/test-clocks/store.js';

/** PATCH /v1/subscriptions/:subscription_id — replace items and/or cancel (`{"status": "canceled"}`). */
export function updateSubscriptionRoute(deps: ApiDeps): RouteDef<SubscriptionChange> {
  return {
    method: 'PATCH',
    path: '/v1/subscriptions/:subscription_id',
    auth: 'write',
    input: parseSubscriptionChange,
    handler: async (ctx, change) => {
      const accountId = ctx.principal!.accountId;
      const { subscription, now } = await withTransaction(deps.pg, async (c) => {
        const { now } = await accountTime(c, accountId);
        return { ...(await changeSubscription(c, accountId, ctx.params.subscription_id!, change, now)), now };
      });
      return reply.ok(toSubscription(subscription, now));
    },
    doc: {
      summary: 'Change a subscription’s items or cancel it',
      tags: ['subscriptions'],
      requestBody: UpdateSubscriptionBody,
      responses: {
        '200': { description: 'The subscription after the change', schema: SubscriptionSchema },
        '409': { description: 'The subscription is canceled (code subscription_canceled)' },
      },
    },
  };
}
